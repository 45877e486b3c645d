/**
 * A server that could not bind its port: the operator's one line at startup
 * (`port 8081 (GATEWAY_PORT) is already in use on 127.0.0.1`), naming the setting to change.
 */
import * as Data from "effect/Data"

export class ListenFailed extends Data.TaggedError("ListenFailed")<{
  /** The setting the port came from: `PORT` or `GATEWAY_PORT`. */
  readonly variable: string
  readonly host: string
  readonly port: number
  /** The system's error code (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, …), if it gave one. */
  readonly code: string | undefined
}> {
  override get message(): string {
    const where = `port ${this.port} (${this.variable})`
    switch (this.code) {
      case "EADDRINUSE":
        return `${where} is already in use on ${this.host}`
      case "EACCES":
        return `${where} on ${this.host}: permission denied`
      case "EADDRNOTAVAIL":
        return `${where}: ${this.host} is not an address of this machine (HOST)`
      default:
        return `cannot listen on ${where} on ${this.host}${this.code === undefined ? "" : ` (${this.code})`}`
    }
  }
}

/** The code of a `listen` error, wherever the server library put it. */
export const listenErrorCode = (error: unknown): string | undefined => {
  const seen = new Set<unknown>()
  let current = error
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    seen.add(current)
    if ("code" in current && typeof current.code === "string") return current.code
    current = "cause" in current ? current.cause : undefined
  }
  return undefined
}
