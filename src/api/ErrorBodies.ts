/**
 * Every error the API answers is `{"error": "<human-readable>"}` (docs/api.md, "Errors"):
 *
 * - HttpApi encodes tagged errors with their `_tag`, and a request that fails its schema as an
 *   `HttpApiDecodeError` with `issues`; both are rewritten here to `{error}`, the decode error to a
 *   400 whose message names each offending field (`limit: must be an integer from 1 to 1000`).
 * - 429 gets its `Retry-After` header from the error's `retry_after_seconds`.
 * - A body that is not JSON is a 400, a body over the size limit a 413, a JSON body nesting deeper
 *   than `MAX_JSON_DEPTH` a 400 before anything parses it (adapters/http/JsonDepth.ts), and anything
 *   unexpected a 500 `{"error": "internal error"}`, logged without the request's data. No stack
 *   trace or internal message ever reaches a response, and a field's message quotes at most
 *   `MAX_ISSUE_CHARACTERS` of what was sent.
 */
import type { HttpServerError } from "@effect/platform/HttpServerError"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { jsonDepth, MAX_JSON_DEPTH } from "../../adapters/http/JsonDepth.js"

interface Issue {
  readonly path?: ReadonlyArray<unknown>
  readonly message?: string
}

/** Characters of one issue's message in an error body: schema messages quote the value sent, which may be a whole body. */
const MAX_ISSUE_CHARACTERS = 300

const bounded = (message: string): string =>
  message.length <= MAX_ISSUE_CHARACTERS ? message : `${message.slice(0, MAX_ISSUE_CHARACTERS)}…`

/** `field.sub: message` per issue; the HttpApi issue path starts at the payload, params or query. */
export const describeIssues = (issues: ReadonlyArray<Issue>): string => {
  const lines = issues.slice(0, 5).map(({ message, path }) => {
    const field = bounded((path ?? []).map(String).join("."))
    const text = message === undefined || message === "" ? "is invalid" : bounded(message)
    return field === "" ? text : `${field}: ${text}`
  })
  return lines.length === 0 ? "request does not match the expected schema" : lines.join("; ")
}

const json = (body: { readonly error: string }, status: number, headers?: Record<string, string>) =>
  HttpServerResponse.unsafeJson(body, { status, ...(headers === undefined ? {} : { headers }) })

const decoder = new TextDecoder()

/** Retry-After of a 503 (the database unreachable): about a restart's length. */
const RETRY_UNAVAILABLE_SECONDS = 5

/** The rewritten response, or the same one when it is not a tagged error body. */
const rewrite = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (parsed === null || typeof parsed !== "object") return response
  const body = parsed as { _tag?: unknown; issues?: unknown; error?: unknown; retry_after_seconds?: unknown }
  if (typeof body._tag !== "string") return response
  if (body._tag === "HttpApiDecodeError") {
    return json({ error: describeIssues(Array.isArray(body.issues) ? body.issues : []) }, 400)
  }
  const error = typeof body.error === "string" ? body.error : "error"
  if (response.status === 429) {
    const seconds = Number.isInteger(body.retry_after_seconds) ? (body.retry_after_seconds as number) : 1
    return json({ error }, 429, { "retry-after": String(seconds) })
  }
  // The database is unreachable: worth another try soon.
  if (response.status === 503) return json({ error }, 503, { "retry-after": String(RETRY_UNAVAILABLE_SECONDS) })
  return json({ error }, response.status)
}

/** What the Node request reader reports for an oversized or unparsable body (see HttpApiBuilder's `Effect.orDie(request.json)`). */
const bodyFailure = (defect: unknown, maxBytes: number): HttpServerResponse.HttpServerResponse | undefined => {
  const error = defect as { _tag?: unknown; reason?: unknown; cause?: unknown }
  if (error?._tag !== "RequestError" || error.reason !== "Decode") return undefined
  if (error.cause instanceof Error && error.cause.message === "maxBytes exceeded") {
    return json({ error: `request body is larger than ${maxBytes} bytes` }, 413)
  }
  return json({ error: "request body is not valid JSON" }, 400)
}

/** The declared body length, when it is a number. */
const declaredLength = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const value = Number(request.headers["content-length"])
  return Number.isFinite(value) ? value : undefined
}

const isJson = (request: HttpServerRequest.HttpServerRequest): boolean =>
  (request.headers["content-type"] ?? "").toLowerCase().includes("json")

/**
 * A JSON body nesting deeper than MAX_JSON_DEPTH is answered 400 before the handler parses it. The
 * request's text is read once and cached by the platform, so the handler reads the same bytes.
 */
const refuseDeepJson = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "GET" || request.method === "HEAD" || !isJson(request)
    ? Effect.succeed(undefined)
    : Effect.map(request.text, (text) =>
        jsonDepth(text) > MAX_JSON_DEPTH
          ? json({ error: `request body nests deeper than ${MAX_JSON_DEPTH} levels` }, 400)
          : undefined
      )

/**
 * A global router middleware: the body size limit, and every error response as `{error}`.
 *
 * A declared `Content-Length` over the limit is answered before the body is read, so the client
 * receives the 413 (Node discards the unread body); a chunked body is cut off when it crosses the
 * limit, which ends the connection (the reader destroys the stream).
 */
export const ErrorBodiesLive = (options: { readonly maxBodyBytes: number }) =>
  HttpLayerRouter.middleware<{ handles: HttpServerError | unknown }>()(
    (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        (declaredLength(request) ?? 0) > options.maxBodyBytes
          ? Effect.succeed(json({ error: `request body is larger than ${options.maxBodyBytes} bytes` }, 413))
          : Effect.flatMap(refuseDeepJson(request), (refused) =>
              refused === undefined ? httpEffect : Effect.succeed(refused)
            )
      ).pipe(
        HttpIncomingMessage.withMaxBodySize(Option.some(options.maxBodyBytes)),
        Effect.map(rewrite),
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          const failure = Cause.squash(cause)
          const answered = bodyFailure(failure, options.maxBodyBytes)
          if (answered !== undefined) return Effect.succeed(answered)
          if ((failure as { _tag?: unknown })?._tag === "RouteNotFound") {
            return Effect.succeed(json({ error: "not found" }, 404))
          }
          return Effect.as(
            Effect.logError("request failed").pipe(Effect.annotateLogs("cause", Cause.pretty(cause))),
            json({ error: "internal error" }, 500)
          )
        })
      ),
    { global: true }
  )
