/**
 * contracts/CandorAnchor.sol on the in-process chain: solc yields exactly the ABI the code is typed
 * with (adapters/chain/AnchorAbi.ts); the deployed code is what the source compiles to; only the
 * deployer writes; a batch is write-once, 1 to 200 leaves, never a zero root; reads and events carry
 * the root, count and time. The client (adapters/chain/AnchorChain.ts) keeps the RPC URL out of its
 * errors.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createPublicClient, createWalletClient, http, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { candorAnchorAbi } from "../../../adapters/chain/AnchorAbi.js"
import { AnchorChain, layer as chainLayer } from "../../../adapters/chain/AnchorChain.js"
import { makeClient } from "../../../adapters/chain/ViemChain.js"
import { compileAnchorContract, runtimeCodeFor } from "../../../adapters/chain/AnchorContract.js"
import { deployAnchorContract } from "../../../adapters/chain/Deploy.js"
import { startInProcessChain } from "../../support/InProcessChain.js"

const bytes32 = (byte: string) => `0x${byte.repeat(32)}` as Hex

describe("CandorAnchor", () => {
  it("compiles with solc to exactly the ABI the code is typed with", () => {
    const compiled = compileAnchorContract()
    expect(compiled.abi).toStrictEqual(JSON.parse(JSON.stringify(candorAnchorAbi)))
    expect(compiled.compilerVersion).toMatch(/^0\.8\.37\+/)
    expect(() => compileAnchorContract("pragma solidity ^0.8.0; contract X { function f( }")).toThrow(
      /does not compile/
    )
  })

  it("is deployed by its owner, who alone writes; batches are write-once, 1 to 200 leaves, non-zero", async () => {
    const ownerKey = generatePrivateKey()
    const otherKey = generatePrivateKey()
    const chain = await startInProcessChain([
      privateKeyToAccount(ownerKey).address,
      privateKeyToAccount(otherKey).address
    ])
    try {
      const deployment = await Effect.runPromise(
        deployAnchorContract({
          rpcUrl: Redacted.make(chain.url),
          privateKey: Redacted.make(ownerKey),
          pollingIntervalMs: 20
        })
      )
      expect(deployment).toMatchObject({ chain_id: 31337, owner: privateKeyToAccount(ownerKey).address })
      const reader = createPublicClient({ transport: http(chain.url), pollingInterval: 20 })
      // The code at the address is the runtime code of the source as compiled here, with its owner filled in.
      const compiled = compileAnchorContract()
      expect(compiled.immutableRanges.length).toBeGreaterThan(0)
      expect(await reader.getCode({ address: deployment.address })).toBe(runtimeCodeFor(compiled, deployment.owner))
      expect(await reader.getCode({ address: deployment.address })).not.toBe(
        runtimeCodeFor(compiled, privateKeyToAccount(otherKey).address)
      )
      const read = (functionName: "owner" | "MAX_BATCH_SIZE") =>
        reader.readContract({ address: deployment.address, abi: candorAnchorAbi, functionName })
      expect(await read("owner")).toBe(deployment.owner)
      expect(await read("MAX_BATCH_SIZE")).toBe(200n)

      const client = await Effect.runPromise(
        makeClient({
          rpcUrl: Redacted.make(chain.url),
          privateKey: Redacted.make(ownerKey),
          contract: deployment.address,
          pollingIntervalMs: 20
        })
      )
      const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(effect))
      const sent = await run(client.send("tree_heads", bytes32("11"), "ab".repeat(32), 3))
      expect(sent._tag).toBe("Right")
      const receipt = await Effect.runPromise(client.waitForReceipt((sent as { right: Hex }).right))
      expect(receipt).toMatchObject({ status: "success", from: deployment.owner.toLowerCase() })
      const held = await Effect.runPromise(client.read("tree_heads", bytes32("11")))
      expect(held).toMatchObject({ root: "ab".repeat(32), leaf_count: 3 })
      // The same id under the other kind is a different record: nothing there.
      expect(await Effect.runPromise(client.read("scores", bytes32("11")))).toBeUndefined()
      const events = await reader.getContractEvents({
        address: deployment.address,
        abi: candorAnchorAbi,
        eventName: "TreeHeadsAnchored",
        fromBlock: 0n
      })
      expect(events.map((e) => e.args)).toEqual([
        { anchorId: bytes32("11"), batchRoot: `0x${"ab".repeat(32)}`, leafCount: 3, timestamp: BigInt(held!.timestamp) }
      ])

      const refused = async (effect: Effect.Effect<unknown, { message: string }>) => {
        const result = await run(effect)
        expect(result._tag).toBe("Left")
        return (result as { left: { message: string } }).left.message
      }
      expect(await refused(client.send("tree_heads", bytes32("11"), "cd".repeat(32), 3))).toMatch(/AlreadyRecorded/)
      expect(await refused(client.send("scores", bytes32("22"), "cd".repeat(32), 201))).toMatch(/BatchTooLarge/)
      expect(await refused(client.send("scores", bytes32("22"), "cd".repeat(32), 0))).toMatch(/EmptyBatch/)
      expect(await refused(client.send("scores", bytes32("22"), "00".repeat(32), 1))).toMatch(/ZeroRoot/)
      expect(await run(client.send("scores", bytes32("22"), "cd".repeat(32), 200))).toMatchObject({ _tag: "Right" })

      // Another key is refused, by the contract itself (sent raw, past any client-side check).
      const other = createWalletClient({ account: privateKeyToAccount(otherKey), transport: http(chain.url) })
      const chainDef = {
        id: 31337,
        name: "dev",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [chain.url] } }
      }
      await expect(
        other.writeContract({
          chain: chainDef,
          address: deployment.address,
          abi: candorAnchorAbi,
          functionName: "anchorTreeHeads",
          args: [bytes32("33"), bytes32("44"), 1]
        })
      ).rejects.toThrow(/NotOwner/)
      await expect(
        other
          .writeContract({
            chain: chainDef,
            address: deployment.address,
            abi: candorAnchorAbi,
            functionName: "anchorTreeHeads",
            args: [bytes32("33"), bytes32("44"), 1],
            gas: 100_000n
          })
          .then((hash) => reader.waitForTransactionReceipt({ hash }))
      ).resolves.toMatchObject({ status: "reverted" })
      expect(await Effect.runPromise(client.read("tree_heads", bytes32("33")))).toBeUndefined()
    } finally {
      await chain.close()
    }
  }, 60_000)

  it.effect("is off unless the RPC URL, the key and the contract are all set, naming what is missing", () =>
    Effect.gen(function* () {
      const { client, missing } = yield* Effect.provide(
        AnchorChain,
        chainLayer({
          rpcUrl: Option.some(Redacted.make("http://127.0.0.1:1")),
          privateKey: Option.none(),
          contract: Option.none()
        })
      )
      expect(client).toBeUndefined()
      expect(missing).toEqual(["CANDOR_CHAIN_PRIVATE_KEY", "CANDOR_CHAIN_CONTRACT"])
    })
  )

  it.effect("keeps the RPC URL (which may carry an API key) and the private key out of its errors", () =>
    Effect.gen(function* () {
      const key = generatePrivateKey()
      const client = yield* makeClient({
        rpcUrl: Redacted.make("http://127.0.0.1:1/v2/secret-api-token"),
        privateKey: Redacted.make(key),
        contract: "0x0000000000000000000000000000000000000001"
      })
      const error = yield* Effect.flip(client.chainId)
      expect(error._tag).toBe("ChainError")
      expect(error.message).not.toContain("secret-api-token")
      expect(error.message).not.toContain("127.0.0.1")
      expect(error.message).not.toContain(key.slice(2, 20))
      expect(String(Redacted.make(key))).toBe("<redacted>")
    })
  )
})
