/**
 * What a client of the CandorAnchor contract does (AnchorChain.ts provides one when anchoring is
 * configured; ViemChain.ts builds it), and the error every one of its calls may fail with.
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { Hex } from "viem"
import type { AnchorKind } from "../../core/AnchorBatch.js"

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
