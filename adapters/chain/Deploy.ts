/**
 * Deploys contracts/CandorAnchor.sol (`candor chain deploy`, and the tests): compiled here with
 * solc (adapters/chain/AnchorContract.ts), sent from the configured key, which becomes the
 * contract's owner and only writer. Prints nothing and logs nothing: the caller reports the address.
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type { Hex } from "viem"
import { candorAnchorAbi } from "./AnchorAbi.js"
import { ChainError } from "./AnchorChainClient.js"
import { compileAnchorContract } from "./AnchorContract.js"
import { chainMessage, clientsFor } from "./ViemChain.js"

export interface Deployment {
  readonly address: Hex
  readonly owner: Hex
  readonly chain_id: number
  readonly tx_hash: Hex
  readonly block_number: number
  readonly compiler_version: string
}

export const deployAnchorContract = (settings: {
  readonly rpcUrl: Redacted.Redacted
  readonly privateKey: Redacted.Redacted
  readonly pollingIntervalMs?: number | undefined
}): Effect.Effect<Deployment, ChainError> =>
  Effect.tryPromise({
    try: async () => {
      const compiled = compileAnchorContract()
      const { account, chainFor, publicClient, walletFor } = clientsFor(
        settings.rpcUrl,
        settings.privateKey,
        settings.pollingIntervalMs
      )
      const chainId = await publicClient.getChainId()
      const txHash = await walletFor(chainFor(chainId)).deployContract({
        abi: candorAnchorAbi,
        bytecode: compiled.bytecode
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash: txHash, timeout: 300_000 })
      if (receipt.status !== "success" || receipt.contractAddress == null)
        throw new Error(`the deployment transaction ${txHash} reverted`)
      return {
        address: receipt.contractAddress,
        owner: account.address,
        chain_id: chainId,
        tx_hash: txHash,
        block_number: Number(receipt.blockNumber),
        compiler_version: compiled.compilerVersion
      }
    },
    catch: (cause) => new ChainError({ message: chainMessage(cause) })
  })
