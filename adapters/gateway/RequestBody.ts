/**
 * A request body as the gateway reads it: JSON, after its content coding (`Content-Encoding: gzip`,
 * `deflate`, `br`, decoded by `ContentCoding.ts`) and a UTF-8 byte order mark, since the providers
 * accept both; a body the gateway reads differently from the provider would let an agent hide its
 * tools from the policy.
 *
 * `parseJsonBody` is the synchronous read of a plain body (the fast path's); `RequestBody` reads a
 * body once, on first use, decoding it first when it is encoded (the effectful path's).
 */
import * as Effect from "effect/Effect"
import type { IncomingHttpHeaders } from "node:http"
import { codingOf, type CodingOf, decodeBody } from "./ContentCoding.js"

const isBom = (bytes: Uint8Array): boolean =>
  bytes.byteLength >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

/** JSON of UTF-8 bytes (one leading byte order mark skipped), or `undefined` when they are not JSON. */
export const parseJsonBody = (bytes: Uint8Array): unknown => {
  const start = isBom(bytes) ? 3 : 0
  try {
    return JSON.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start).toString("utf8")
    ) as unknown
  } catch {
    return undefined
  }
}

/**
 * Bodies already parsed, by the bytes' identity: a request the synchronous path hands on to the
 * effectful one is parsed once, not twice (a multi-megabyte parse is itself a stall: issue 24).
 */
const parsedBodies = new WeakMap<Uint8Array, { readonly json: unknown }>()

/** `parseJsonBody`, once per bytes object. */
export const parseJsonBodyOnce = (bytes: Uint8Array): unknown => {
  let parsed = parsedBodies.get(bytes)
  if (parsed === undefined) parsedBodies.set(bytes, (parsed = { json: parseJsonBody(bytes) }))
  return parsed.json
}

/** Whether the body carries a content coding (then only the effectful path reads it). */
export const isEncoded = (headers: IncomingHttpHeaders): boolean => {
  const encoding = headers["content-encoding"]
  return encoding !== undefined && codingOf(encoding) !== "identity"
}

/** The body plain or `undefined` when it was undecodable. */
type Decoded = { readonly bytes: Uint8Array | undefined; readonly json: unknown }

/** One request's body, decoded and parsed at most once, when something needs it. */
export class RequestBody {
  readonly coding: CodingOf
  private read: Decoded | undefined

  constructor(
    readonly bytes: Uint8Array,
    headers: IncomingHttpHeaders
  ) {
    const encoding = headers["content-encoding"]
    this.coding = encoding === undefined ? "identity" : codingOf(encoding)
  }

  private readonly decoded: Effect.Effect<Decoded> = Effect.suspend(() => {
    if (this.read !== undefined) return Effect.succeed(this.read)
    return Effect.map(decodeBody(this.coding, this.bytes), (bytes) => {
      this.read = { bytes, json: bytes === undefined ? undefined : parseJsonBodyOnce(bytes) }
      return this.read
    })
  })

  /** The body's plain bytes (after its content coding); `undefined` when undecodable. */
  readonly plain: Effect.Effect<Uint8Array | undefined> = Effect.map(this.decoded, (read) => read.bytes)

  /** The body's JSON; `undefined` when it is empty, undecodable or not JSON. */
  readonly json: Effect.Effect<unknown> = Effect.map(this.decoded, (read) => read.json)

  /** A non-empty body whose JSON cannot be read (undecodable, or not JSON): its tools are unknown. */
  readonly unreadable: Effect.Effect<boolean> = Effect.map(
    this.decoded,
    (read) => this.bytes.byteLength > 0 && read.json === undefined
  )
}
