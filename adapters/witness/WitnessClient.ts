/**
 * The HTTP edge of witnessing: one `POST <url>/add-checkpoint` (c2sp.org/tlog-witness) per
 * submission, through undici on a keep-alive agent, as the spec asks of clients.
 *
 * The answer is classified, never trusted: a 200's body must be well-formed signature lines (the
 * caller, streams/Witnessing.ts, verifies them against the witness's key before storing any); a
 * 409's must be a `text/x.tlog.size` size. At most 64 KiB of any answer is read. Redirects are not
 * followed. Witness URLs are the operator's configuration (CANDOR_WITNESSES), so, unlike webhook
 * URLs that users register, private and loopback addresses are allowed.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent, request } from "undici"
import { parseCosignatureLines, parseTlogSize, type WitnessKey } from "../../core/Cosignature.js"

/** A configured witness: where to submit, and the key its cosignatures must verify under. */
export interface WitnessEndpoint {
  /** The submission prefix, without trailing slash: requests go to `${url}/add-checkpoint`. */
  readonly url: string
  readonly key: WitnessKey
  /** The verifier key, `<name>+<hash>+<base64>`. */
  readonly vkey: string
}

export type AddCheckpointAnswer =
  /** 200: the signature lines, well-formed but not yet verified. */
  | { readonly _tag: "Cosigned"; readonly lines: ReadonlyArray<string> }
  /** 409 with the size of the witness's latest cosigned checkpoint of this origin. */
  | { readonly _tag: "Conflict"; readonly size: number }
  /** Any other answer: the status and a short, printable excerpt of the body. */
  | { readonly _tag: "Refused"; readonly status: number; readonly message: string }

export class WitnessError extends Data.TaggedError("WitnessError")<{
  readonly reason: "network" | "timeout" | "too_large"
}> {}

export interface WitnessClientOptions {
  /** The whole exchange, connect to last body byte. */
  readonly timeout: Duration.DurationInput
}

export const defaultClientOptions: WitnessClientOptions = { timeout: "10 seconds" }

export class WitnessClient extends Context.Tag("candor/adapters/witness/WitnessClient")<
  WitnessClient,
  {
    readonly addCheckpoint: (witness: WitnessEndpoint, body: string) => Effect.Effect<AddCheckpointAnswer, WitnessError>
  }
>() {
  static readonly layer = (options: Partial<WitnessClientOptions> = {}): Layer.Layer<WitnessClient> =>
    Layer.succeed(WitnessClient, make(options))
}

const ANSWER_LIMIT = 64 * 1024

const agent = new Agent({ keepAliveTimeout: 30_000 })

/** Printable excerpt of an error body for logs and the stored error: no control characters, short. */
const excerpt = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .trim()
    .slice(0, 200)

class TooLarge extends Error {}

export const make = (options: Partial<WitnessClientOptions> = {}): WitnessClient["Type"] => {
  const { timeout } = { ...defaultClientOptions, ...options }
  return {
    addCheckpoint: (witness, body) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await request(`${witness.url}/add-checkpoint`, {
            method: "POST",
            headers: { "content-type": "text/plain; charset=utf-8", "user-agent": "candor-witnessing" },
            body,
            signal,
            dispatcher: agent
          })
          const chunks: Array<Buffer> = []
          let length = 0
          for await (const chunk of response.body as AsyncIterable<Buffer>) {
            length += chunk.length
            if (length > ANSWER_LIMIT) {
              response.body.destroy()
              throw new TooLarge()
            }
            chunks.push(chunk)
          }
          return { status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") }
        },
        catch: (cause) =>
          new WitnessError({
            reason:
              cause instanceof TooLarge
                ? "too_large"
                : cause instanceof Error && /Timeout|Abort/.test(cause.name)
                  ? "timeout"
                  : "network"
          })
      }).pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new WitnessError({ reason: "timeout" }) }),
        Effect.map(({ status, text }): AddCheckpointAnswer => {
          if (status === 200) {
            const lines = parseCosignatureLines(text)
            return lines === undefined
              ? { _tag: "Refused", status, message: "the answer is not signature lines" }
              : { _tag: "Cosigned", lines }
          }
          if (status === 409) {
            const size = parseTlogSize(text)
            if (size !== undefined) return { _tag: "Conflict", size }
          }
          return { _tag: "Refused", status, message: excerpt(text) }
        })
      )
  }
}
