/**
 * The gateway's one decoder of HTTP content codings (RFC 9110 §8.4), for every body it reads: the
 * side copy of an observed answer (streamed through `DecodingObserver.ts`), a held answer (enforce,
 * non-streaming) and a request body whose tools the policy must see. The client and the provider
 * always get the bytes as they were sent; only Candor's own copy is decoded, on libuv's thread pool.
 *
 * - Decoded: `gzip` (and `x-gzip`), `deflate` (zlib-wrapped, or raw as some servers send it), `br`.
 *   Anything else (`zstd`, `compress`, codings stacked on one another) is not: the body is
 *   `undecodable` and its exchange is recorded as unanalysed (`undecodable_encoding`), never judged
 *   on compressed bytes.
 * - Bounded: a decoded copy larger than `MAX_DECODED_BYTES` is undecodable too, so a small
 *   compressed body cannot make the gateway hold gigabytes (a compression bomb).
 * - `acceptEncodingForUpstream` rewrites the client's `Accept-Encoding` to the codings above (plus
 *   `identity`), so no client can have the provider answer in a coding the gateway cannot read.
 */
import * as Effect from "effect/Effect"
import * as zlib from "node:zlib"

/** A coding the gateway decodes. */
export type Coding = "gzip" | "deflate" | "br"

/** What a `Content-Encoding` header asks of a reader: nothing, one coding we decode, or one we cannot. */
export type CodingOf = "identity" | Coding | "unsupported"

/**
 * The most a decoded copy may hold: as much as a plain request body may (the gateway's 32 MiB), far
 * above any real answer. Past it the body counts as undecodable.
 */
export const MAX_DECODED_BYTES = 32 * 1024 * 1024

const codingOfToken = (token: string): CodingOf => {
  switch (token.trim().toLowerCase()) {
    case "":
    case "identity":
      return "identity"
    case "gzip":
    case "x-gzip":
      return "gzip"
    case "deflate":
      return "deflate"
    case "br":
      return "br"
    default:
      return "unsupported"
  }
}

/**
 * The coding of a body from its `Content-Encoding` (Node gives repeated headers joined by `, `, undici
 * as an array). `identity` members are ignored; two real codings stacked are `unsupported`.
 */
export const codingOf = (header: string | ReadonlyArray<string> | undefined): CodingOf => {
  if (header === undefined) return "identity"
  const text = typeof header === "string" ? header : header.join(",")
  // The usual case (one token, no list) costs no split.
  if (!text.includes(",")) return codingOfToken(text)
  let found: CodingOf = "identity"
  for (const token of text.split(",")) {
    const coding = codingOfToken(token)
    if (coding === "identity") continue
    if (coding === "unsupported" || found !== "identity") return "unsupported"
    found = coding
  }
  return found
}

// Z_SYNC_FLUSH on finish: a body cut short still yields everything decodable, rather than an error
// (the parser then sees a truncated text, which it reports as such).
const ZLIB_OPTIONS = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: MAX_DECODED_BYTES }
const BROTLI_OPTIONS = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_DECODED_BYTES }

/**
 * `deflate` is zlib-wrapped by the RFC, but some servers send raw DEFLATE under that name (browsers
 * accept both). A zlib stream opens with a CMF byte whose low nibble is 8 and a header checksum.
 */
const isZlibWrapped = (first: number, second: number | undefined): boolean =>
  (first & 0x0f) === 8 && (second === undefined || ((first << 8) | second) % 31 === 0)

/** A streaming decoder for `coding`; `firstBytes` tells raw from wrapped DEFLATE. */
export const createDecoder = (
  coding: Coding,
  firstBytes: Uint8Array
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | zlib.InflateRaw => {
  switch (coding) {
    case "gzip":
      return zlib.createGunzip(ZLIB_OPTIONS)
    case "deflate":
      return isZlibWrapped(firstBytes[0] ?? 0x78, firstBytes[1])
        ? zlib.createInflate(ZLIB_OPTIONS)
        : zlib.createInflateRaw(ZLIB_OPTIONS)
    case "br":
      return zlib.createBrotliDecompress(BROTLI_OPTIONS)
  }
}

type Callback = (error: Error | null, result: Buffer) => void

const decodeWith = (coding: Coding, bytes: Uint8Array, done: Callback): void => {
  switch (coding) {
    case "gzip":
      return zlib.gunzip(bytes, ZLIB_OPTIONS, done)
    case "deflate":
      return isZlibWrapped(bytes[0] ?? 0x78, bytes[1])
        ? zlib.inflate(bytes, ZLIB_OPTIONS, done)
        : zlib.inflateRaw(bytes, ZLIB_OPTIONS, done)
    case "br":
      return zlib.brotliDecompress(bytes, BROTLI_OPTIONS, done)
  }
}

/** A whole body decoded, or `undefined` when it cannot be (an unsupported or corrupt coding, or too large). */
export const decodeBody = (coding: CodingOf, bytes: Uint8Array): Effect.Effect<Uint8Array | undefined> => {
  if (coding === "identity") return Effect.succeed(bytes)
  if (coding === "unsupported") return Effect.succeed(undefined)
  if (bytes.byteLength === 0) return Effect.succeed(bytes)
  return Effect.async<Uint8Array | undefined>((resume) => {
    decodeWith(coding, bytes, (error, result) => resume(Effect.succeed(error === null ? result : undefined)))
  })
}

// ---------------------------------------------------------------------------------------------
// Accept-Encoding

/** A list that names only codings the gateway decodes (with optional q-values): forwarded as it is. */
const READABLE_LIST =
  /^[ \t]*(?:gzip|x-gzip|deflate|br|identity)(?:[ \t]*;[ \t]*q=[0-9.]{1,5})?(?:[ \t]*,[ \t]*(?:gzip|x-gzip|deflate|br|identity)(?:[ \t]*;[ \t]*q=[0-9.]{1,5})?)*[ \t]*$/i

/** What SDKs and browsers send, already readable: a set lookup, not a regex, per request. */
const COMMON: ReadonlySet<string> = new Set([
  "gzip, deflate",
  "gzip, deflate, br",
  "gzip, br",
  "gzip",
  "identity",
  "br"
])

const DECODED_TOKENS: ReadonlySet<string> = new Set(["gzip", "x-gzip", "deflate", "br", "identity"])

/** What a client that sent no `Accept-Encoding` gets asked for: the plain body it can surely read. */
export const ACCEPT_ENCODING_DEFAULT = "identity"

/**
 * The `Accept-Encoding` the provider sees for the client's `value` (undefined: the client sent none).
 * The members naming a coding the gateway decodes are kept as the client wrote them (q-values
 * included); `*` stands for the three; the rest (`zstd`, …) is dropped. Without a member left, or
 * without the header, `identity`: the client gets a plain body, which it can always read.
 * The usual header (an SDK's `gzip, deflate`) matches `READABLE_LIST` and is passed as it is.
 */
export const acceptEncodingForUpstream = (value: string | undefined): string => {
  if (value === undefined) return ACCEPT_ENCODING_DEFAULT
  if (COMMON.has(value) || (value.length <= 256 && READABLE_LIST.test(value))) return value
  const kept: Array<string> = []
  // Bounded: a client's header is at most Node's header limit; each member is looked at once.
  for (const member of value.split(",")) {
    const semicolon = member.indexOf(";")
    const token = (semicolon < 0 ? member : member.slice(0, semicolon)).trim().toLowerCase()
    const params = semicolon < 0 ? "" : member.slice(semicolon).trim()
    if (DECODED_TOKENS.has(token)) kept.push(`${token}${params}`)
    else if (token === "*" && !/q=0(?:\.0*)?$/.test(params)) kept.push("gzip", "deflate", "br")
  }
  return kept.length === 0 ? ACCEPT_ENCODING_DEFAULT : kept.join(", ")
}

const encodeWith = (coding: Coding, bytes: Uint8Array, done: Callback): void => {
  switch (coding) {
    case "gzip":
      return zlib.gzip(bytes, done)
    case "deflate":
      return zlib.deflate(bytes, done)
    case "br":
      return zlib.brotliCompress(bytes, done)
  }
}

/**
 * `bytes` encoded with `coding`: a request body the gateway rewrote (a nudge injected) goes upstream
 * in the coding its `Content-Encoding` still names. Fails only on a zlib error (a bug).
 */
export const encodeBody = (coding: CodingOf, bytes: Uint8Array): Effect.Effect<Uint8Array> => {
  if (coding === "identity" || coding === "unsupported") return Effect.succeed(bytes)
  return Effect.async<Uint8Array>((resume) => {
    encodeWith(coding, bytes, (error, result) => resume(error === null ? Effect.succeed(result) : Effect.die(error)))
  })
}
