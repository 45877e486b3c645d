/**
 * The chain Candor anchors to (docs/on-chain.md): viem's public and wallet clients over
 * `http(CANDOR_CHAIN_RPC_URL)`, the account of CANDOR_CHAIN_PRIVATE_KEY, and the CandorAnchor
 * contract at CANDOR_CHAIN_CONTRACT. Anchoring is off unless all three are set; `AnchorChain.client`
 * is then `undefined` and `missing` names what to set.
 *
 * The RPC URL and the key are secrets (`Redacted`): an RPC URL often carries a provider's API key,
 * so neither is ever logged or put in an error. Errors carry viem's short message only (it names
 * no URL). Transactions from one process are sent one at a time, so two never take the same nonce.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
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
import type { AnchorKind } from "../../core/AnchorBatch.js"
import { candorAnchorAbi } from "./AnchorAbi.js"

/** The chain could not be reached, refused a transaction, or answered something unexpected. */
export class ChainError extends Data.TaggedError("ChainError")<{ readonly message: string }> {}

export interface ChainReceipt {
  readonly tx_hash: Hex
  readonly block_number: number
  readonly block_hash: Hex
  /** `success`, or `reverted` (the transaction was mined but changed nothing). */
  readonly status: "success" | "reverted"
  readonly from: Hex
  readonly to: Hex | null
  /** Decimal strings: wei and gas exceed JavaScript's safe integers on some chains. */
  readonly gas_used: string
  readonly effective_gas_price: string
}

/** What the contract holds for one id: the batch root (hex, no 0x), its leaf count, the block time. */
export interface OnChainBatch {
  readonly root: string
  readonly leaf_count: number
  readonly timestamp: number
}

export interface AnchorChainClient {
  /** The contract's address (checksummed as configured, compared case-insensitively). */
  readonly contract: Hex
  /** The address of the configured key: the contract's owner. */
  readonly account: Hex
  /** `eth_chainId`, asked once and remembered. */
  readonly chainId: Effect.Effect<number, ChainError>
  /** Sends `anchorTreeHeads` or `publishScores`; answers the transaction hash. */
  readonly send: (kind: AnchorKind, id: Hex, root: string, leafCount: number) => Effect.Effect<Hex, ChainError>
  /** Waits for the receipt up to the configured time; `undefined` when it has not come by then. */
  readonly waitForReceipt: (txHash: Hex) => Effect.Effect<ChainReceipt | undefined, ChainError>
  /** The receipt now; `undefined` while the transaction is not mined. */
  readonly receipt: (txHash: Hex) => Effect.Effect<ChainReceipt | undefined, ChainError>
  readonly blockNumber: Effect.Effect<number, ChainError>
  /** What the contract holds under `id` now; `undefined` when nothing was recorded there. */
  readonly read: (kind: AnchorKind, id: Hex) => Effect.Effect<OnChainBatch | undefined, ChainError>
}

export interface ChainSettings {
  readonly rpcUrl: Option.Option<Redacted.Redacted>
  readonly privateKey: Option.Option<Redacted.Redacted>
  readonly contract: Option.Option<string>
  /** How often viem polls for a receipt (default 2 s; tests poll faster). */
  readonly pollingIntervalMs?: number | undefined
  /** How long a request waits for its receipt before answering `pending` (default 60 s). */
  readonly receiptTimeoutMs?: number | undefined
}

export class AnchorChain extends Context.Tag("candor/adapters/chain/AnchorChain")<
  AnchorChain,
  {
    readonly client: AnchorChainClient | undefined
    /** The variables still to set when `client` is undefined. */
    readonly missing: ReadonlyArray<string>
  }
>() {
  /** Anchoring off: every variable missing. */
  static readonly off: Layer.Layer<AnchorChain> = Layer.succeed(AnchorChain, {
    client: undefined,
    missing: ["CANDOR_CHAIN_RPC_URL", "CANDOR_CHAIN_PRIVATE_KEY", "CANDOR_CHAIN_CONTRACT"]
  })
}

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

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

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

/** Whether a key is a 32-byte hex private key (with or without 0x); the config reader checks it. */
export const isPrivateKey = (text: string): boolean => PRIVATE_KEY.test(text.startsWith("0x") ? text : `0x${text}`)
export const isAddress = (text: string): boolean => ADDRESS.test(text)

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

/** Anchoring as configured: on when the RPC URL, the key and the contract are all set. */
export const layer = (settings: ChainSettings): Layer.Layer<AnchorChain> =>
  Layer.effect(
    AnchorChain,
    Effect.gen(function* () {
      const missing = [
        ...(Option.isNone(settings.rpcUrl) ? ["CANDOR_CHAIN_RPC_URL"] : []),
        ...(Option.isNone(settings.privateKey) ? ["CANDOR_CHAIN_PRIVATE_KEY"] : []),
        ...(Option.isNone(settings.contract) ? ["CANDOR_CHAIN_CONTRACT"] : [])
      ]
      if (Option.isNone(settings.rpcUrl) || Option.isNone(settings.privateKey) || Option.isNone(settings.contract))
        return { client: undefined, missing }
      const client = yield* makeClient({
        rpcUrl: settings.rpcUrl.value,
        privateKey: settings.privateKey.value,
        contract: settings.contract.value as Hex,
        pollingIntervalMs: settings.pollingIntervalMs,
        receiptTimeoutMs: settings.receiptTimeoutMs
      })
      return { client, missing: [] }
    })
  )
