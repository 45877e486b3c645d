/**
 * The chain client behind AnchorChain.ts and `candor chain deploy`: viem's public and wallet clients
 * over `http(CANDOR_CHAIN_RPC_URL)` and the account of CANDOR_CHAIN_PRIVATE_KEY. Errors carry viem's
 * short message only (it names no URL). Transactions from one process are sent one at a time, so
 * two never take the same nonce.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Chain,
  type Hex
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { candorAnchorAbi } from "./AnchorAbi.js"
import { type AnchorChainClient, ChainError, type ChainReceipt } from "./AnchorChainClient.js"

/** viem's one-line message (no URL, no request body), with the contract error's name when it reverted. */
export const chainMessage = (cause: unknown): string => {
  if (cause instanceof BaseError) {
    const reverted = cause.walk((e) => e instanceof ContractFunctionRevertedError)
    const name = reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined
    const first = cause.shortMessage.split("\n")[0] ?? cause.shortMessage
    return name === undefined ? first : `${first} (${name})`
  }
  return cause instanceof Error ? cause.message.split("\n")[0]! : String(cause)
}

const failure = (cause: unknown) => new ChainError({ message: chainMessage(cause) })

const receiptOf = (receipt: {
  transactionHash: Hex
  blockNumber: bigint
  blockHash: Hex
  status: "success" | "reverted"
  from: Hex
  to: Hex | null
  gasUsed: bigint
  effectiveGasPrice: bigint
}): ChainReceipt => ({
  tx_hash: receipt.transactionHash,
  block_number: Number(receipt.blockNumber),
  block_hash: receipt.blockHash,
  status: receipt.status,
  from: receipt.from,
  to: receipt.to,
  gas_used: receipt.gasUsed.toString(),
  effective_gas_price: receipt.effectiveGasPrice.toString()
})

/** viem clients for an RPC URL and key (also `candor chain deploy`'s, before there is a contract). */
export const clientsFor = (rpcUrl: Redacted.Redacted, privateKey: Redacted.Redacted, pollingIntervalMs = 2_000) => {
  const key = Redacted.value(privateKey).trim()
  const account = privateKeyToAccount((key.startsWith("0x") ? key : `0x${key}`) as Hex)
  const transport = http(Redacted.value(rpcUrl), { retryCount: 2, timeout: 20_000 })
  const publicClient = createPublicClient({ transport, pollingInterval: pollingIntervalMs })
  // The chain object viem signs for: its id from the node itself, so the configuration cannot disagree with it.
  const chainFor = (id: number): Chain =>
    defineChain({
      id,
      name: `eip155:${id}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [] } }
    })
  const walletFor = (chain: Chain) =>
    createWalletClient({ account, chain, transport, pollingInterval: pollingIntervalMs })
  return { account, publicClient, chainFor, walletFor }
}

export const makeClient = (settings: {
  readonly rpcUrl: Redacted.Redacted
  readonly privateKey: Redacted.Redacted
  readonly contract: Hex
  readonly pollingIntervalMs?: number | undefined
  readonly receiptTimeoutMs?: number | undefined
}): Effect.Effect<AnchorChainClient> =>
  Effect.gen(function* () {
    const { account, chainFor, publicClient, walletFor } = clientsFor(
      settings.rpcUrl,
      settings.privateKey,
      settings.pollingIntervalMs
    )
    const contract = settings.contract
    const timeout = settings.receiptTimeoutMs ?? 60_000
    const sending = yield* Effect.makeSemaphore(1)
    let knownChainId: number | undefined
    const chainId = Effect.suspend(() =>
      knownChainId !== undefined
        ? Effect.succeed(knownChainId)
        : Effect.tryPromise({ try: () => publicClient.getChainId(), catch: failure }).pipe(
            Effect.tap((id) => Effect.sync(() => (knownChainId = id)))
          )
    )
    const receipt = (txHash: Hex) =>
      Effect.tryPromise({
        try: async () => receiptOf(await publicClient.getTransactionReceipt({ hash: txHash })),
        catch: (cause) => cause
      }).pipe(
        Effect.catchAll((cause) =>
          cause instanceof BaseError && cause.walk((e) => (e as BaseError).name === "TransactionReceiptNotFoundError")
            ? Effect.succeed(undefined)
            : Effect.fail(failure(cause))
        )
      )
    return {
      contract,
      account: account.address,
      chainId,
      send: (kind, id, root, leafCount) =>
        Effect.flatMap(chainId, (id_) =>
          Effect.tryPromise({
            try: () =>
              walletFor(chainFor(id_)).writeContract({
                address: contract,
                abi: candorAnchorAbi,
                functionName: kind === "tree_heads" ? "anchorTreeHeads" : "publishScores",
                args: [id, `0x${root}`, leafCount]
              }),
            catch: failure
          })
        ).pipe(sending.withPermits(1)),
      waitForReceipt: (txHash) =>
        Effect.tryPromise({
          try: async () => receiptOf(await publicClient.waitForTransactionReceipt({ hash: txHash, timeout })),
          catch: (cause) => cause
        }).pipe(
          Effect.catchAll((cause) =>
            cause instanceof BaseError && cause.name === "WaitForTransactionReceiptTimeoutError"
              ? Effect.succeed(undefined)
              : Effect.fail(failure(cause))
          )
        ),
      receipt,
      blockNumber: Effect.tryPromise({ try: () => publicClient.getBlockNumber({ cacheTime: 0 }), catch: failure }).pipe(
        Effect.map(Number)
      ),
      read: (kind, id) =>
        Effect.tryPromise({
          try: () =>
            publicClient.readContract({
              address: contract,
              abi: candorAnchorAbi,
              functionName: kind === "tree_heads" ? "anchorOf" : "publicationOf",
              args: [id]
            }),
          catch: failure
        }).pipe(
          Effect.map(([root, leafCount, timestamp]) =>
            /^0x0{64}$/.test(root)
              ? undefined
              : { root: root.slice(2).toLowerCase(), leaf_count: leafCount, timestamp: Number(timestamp) }
          )
        )
    } satisfies AnchorChainClient
  })
