/**
 * A bus operation that failed: the operation names what was attempted (`publish`, `consume`,
 * `ensureStream`…), the cause is the client's error. Neither carries payloads, so it is safe to log.
 */
import * as Data from "effect/Data"

export class BusError extends Data.TaggedError("BusError")<{
  readonly operation: string
  readonly cause: unknown
  /** Refused for what it is (a subject no stream stores, a payload JSON cannot encode): trying again cannot help. */
  readonly permanent?: boolean
}> {
  override get message(): string {
    const cause = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `bus ${this.operation} failed: ${cause}`
  }
}
