/**
 * `candor chain deploy`: compiles contracts/CandorAnchor.sol with the pinned solc and deploys it
 * from CANDOR_CHAIN_PRIVATE_KEY over CANDOR_CHAIN_RPC_URL (docs/on-chain.md). Prints the address to
 * set as CANDOR_CHAIN_CONTRACT (`--json`: the whole deployment record). Neither secret is printed.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CandorConfig, layerFromEnv } from "../Config.js"

const deploy = Command.make(
  "deploy",
  { json: Options.boolean("json").pipe(Options.withDescription("Print the deployment record as JSON")) },
  ({ json }) =>
    Effect.gen(function* () {
      const config = yield* CandorConfig
      if (Option.isNone(config.chainRpcUrl) || Option.isNone(config.chainPrivateKey)) {
        yield* Console.error("candor chain deploy needs CANDOR_CHAIN_RPC_URL and CANDOR_CHAIN_PRIVATE_KEY")
        process.exitCode = 1
        return
      }
      // Loaded here, not with the CLI: viem and solc are most of a start's module loading.
      const { deployAnchorContract } = yield* Effect.promise(() => import("../../adapters/chain/Deploy.js"))
      const deployed = yield* Effect.either(
        deployAnchorContract({ rpcUrl: config.chainRpcUrl.value, privateKey: config.chainPrivateKey.value })
      )
      if (deployed._tag === "Left") {
        yield* Console.error(`deployment failed: ${deployed.left.message}`)
        process.exitCode = 1
        return
      }
      const d = deployed.right
      if (json) return yield* Console.log(JSON.stringify(d, null, 2))
      yield* Console.log(
        [
          `CandorAnchor deployed on eip155:${d.chain_id} at ${d.address}`,
          `owner ${d.owner}, transaction ${d.tx_hash} (block ${d.block_number}), solc ${d.compiler_version}`,
          `set CANDOR_CHAIN_CONTRACT=${d.address}`
        ].join("\n")
      )
    }).pipe(Effect.provide(layerFromEnv))
).pipe(Command.withDescription("Compile and deploy the CandorAnchor contract; prints its address"))

export const chainCommand = Command.make("chain").pipe(
  Command.withDescription("On-chain anchoring (docs/on-chain.md)"),
  Command.withSubcommands([deploy])
)
