/**
 * GET /v1/stream: the live alert stream (docs/stream.md). Reads the event feed from the client's
 * position (Last-Event-ID / `?since=`, else now), keeps what the filters select and what the caller
 * may read, and writes it as Server-Sent Events or NDJSON with a heartbeat, until the client leaves.
 *
 * Authorisation is per event, as the agent routes decide it (`AccessControl`): an agent's events
 * when the caller may read the agent, an organization's own events (no agent) when the caller
 * belongs to it; decisions are cached per connection for `accessCacheMs`, so a revoked membership
 * stops the flow within that time. Filters for an agent or organization the caller may not read are
 * refused like their routes do (404). The credential (through services/Credentials.ts) and the
 * filters' access are checked again every `credentialCheckMs` (and at a JWT's or session's end): when
 * they end, the stream is closed. Each credential holds at most `maxConnections` streams per process
 * (429 beyond). The reader (a JetStream consumer, or a table tail) is released when the client
 * disconnects.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { untilEnded } from "../../../adapters/auth/CredentialLiveness.js"
import { CurrentPrincipal, type Principal } from "../../../adapters/auth/Principal.js"
import type { BusError } from "../../../adapters/bus/BusError.js"
import { EventFeed, type FeedPosition } from "../../../adapters/bus/EventFeed.js"
import { BadRequest, ServiceUnavailable, TooManyRequests } from "../../../adapters/http/ApiErrors.js"
import type { StoreError } from "../../../adapters/store/Store.js"
import {
  streamAccessEnded,
  streamClients,
  streamEventsSent,
  streamLag
} from "../../../adapters/metrics/StreamMetrics.js"
import { typeSelected } from "../../../core/Events.js"
import type { WebhookEnvelope } from "../../../core/schema/WebhookEvents.js"
import { heartbeatFrame, ndjsonLine, parseTypeFilter, resumeFrom, sseFrame } from "../../../core/StreamFilter.js"
import { Credentials } from "../../../services/Credentials.js"
import { CandorApi } from "../Api.js"
import type { StreamFormat } from "../groups/Stream.js"
import { orgRole } from "./Access.js"
import { readAgent } from "./AgentAccess.js"

export interface StreamOptions {
  /** A heartbeat is written this often (keeps proxies from closing an idle connection). */
  readonly heartbeatMs: number
  /** Streams one credential may hold open on one API process. */
  readonly maxConnections: number
  /** How long a read decision (agent, organization) is reused within a connection. */
  readonly accessCacheMs: number
  /**
   * How often the credential and the filters' access are checked again (at most 30 s: issue 24);
   * a credential with a known end (a JWT's `exp`, a session's expiry) is checked at that end too.
   */
  readonly credentialCheckMs: number
}

export const defaultStreamOptions: StreamOptions = {
  heartbeatMs: 15_000,
  maxConnections: 10,
  accessCacheMs: 30_000,
  credentialCheckMs: 30_000
}

/** Read decisions one connection keeps at most (agents and organizations it has seen events of). */
const MAX_CACHED_DECISIONS = 10_000

const CONTENT_TYPES: Record<StreamFormat, string> = {
  sse: "text/event-stream; charset=utf-8",
  ndjson: "application/x-ndjson; charset=utf-8"
}

/** Whose connections count together: a user (also when impersonated), an API key, the service key. */
const credentialOf = (principal: Principal): string =>
  principal.kind === "user"
    ? `user:${principal.userId}`
    : principal.kind === "api_key"
      ? `key:${principal.keyId}`
      : "service"

/** An event as written: its frame's UTF-8 bytes, and its `created_at` in ms (for the lag metric). */
interface Frame {
  readonly bytes: Uint8Array
  readonly createdMs: number
}

/**
 * Frames by envelope, shared by every connection of the process: readers of one feed hand out the
 * same envelope objects, so a hundred clients cost one JSON and UTF-8 encoding per event, not a hundred.
 */
const sseFrames = new WeakMap<WebhookEnvelope, Frame>()
const ndjsonLines = new WeakMap<WebhookEnvelope, Frame>()
const frameOf = (frames: WeakMap<WebhookEnvelope, Frame>, event: WebhookEnvelope): Frame => {
  let frame = frames.get(event)
  if (frame === undefined) {
    frame = {
      bytes: Buffer.from(frames === sseFrames ? sseFrame(event) : ndjsonLine(event), "utf8"),
      createdMs: Date.parse(event.created_at)
    }
    frames.set(event, frame)
  }
  return frame
}

/**
 * Frames of a run of consecutive events, joined once for every connection that writes the run whole
 * (keyed by its first event; a feed hands each reader its events in order, each once, so the same
 * first and last event and length mean the same run): one buffer, one socket write, and one copy
 * per chunk for a hundred clients, not a hundred.
 */
interface JoinedRun {
  readonly last: WebhookEnvelope
  readonly length: number
  readonly bytes: Uint8Array
}
const sseRuns = new WeakMap<WebhookEnvelope, JoinedRun>()
const ndjsonRuns = new WeakMap<WebhookEnvelope, JoinedRun>()
const joinedRun = (
  runs: WeakMap<WebhookEnvelope, JoinedRun>,
  first: WebhookEnvelope,
  last: WebhookEnvelope,
  parts: ReadonlyArray<Uint8Array>
): Uint8Array => {
  const known = runs.get(first)
  if (known !== undefined && known.last === last && known.length === parts.length) return known.bytes
  const bytes = Buffer.concat(parts)
  runs.set(first, { last, length: parts.length, bytes })
  return bytes
}

/** Chunks of frames a connection holds for its client before its reader waits. */
const OUTPUT_BUFFER = 64

export const StreamLive = (options: Partial<StreamOptions> = {}) =>
  HttpApiBuilder.group(CandorApi, "stream", (handlers) => {
    const settings = { ...defaultStreamOptions, ...options }
    /** Open streams per credential, in this process. */
    const open = new Map<string, number>()
    const release = (credential: string) =>
      Effect.sync(() => {
        const left = (open.get(credential) ?? 1) - 1
        if (left <= 0) open.delete(credential)
        else open.set(credential, left)
      }).pipe(Effect.zipRight(Metric.incrementBy(streamClients, -1)))

    return handlers.handle("stream", ({ headers, urlParams }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const access = yield* AccessControl
        const credentials = yield* Credentials
        const feed = yield* EventFeed
        const filter = parseTypeFilter(urlParams.types)
        if (filter._tag === "Invalid") return yield* new BadRequest({ error: filter.error })
        const from = resumeFrom(headers["last-event-id"], urlParams.since)
        if (from._tag === "Invalid") return yield* new BadRequest({ error: from.error })
        const { agent_id: agentId, format, org_id: orgId } = urlParams
        if (orgId !== undefined) yield* orgRole(orgId)
        if (agentId !== undefined) yield* readAgent(agentId)

        const credential = credentialOf(principal)
        const held = open.get(credential) ?? 0
        if (held >= settings.maxConnections) {
          return yield* new TooManyRequests({
            error: `at most ${settings.maxConnections} open streams per credential: close one first`,
            retry_after_seconds: 5
          })
        }
        open.set(credential, held + 1)
        yield* Metric.increment(streamClients)
        const scope = yield* Scope.make()
        const close = Effect.zipRight(Scope.close(scope, Exit.void), release(credential))
        const position: FeedPosition = from
        const events = yield* feed.read(position).pipe(
          Scope.extend(scope),
          Effect.onError(() => close),
          Effect.catchTag("BusError", (error) =>
            Effect.zipRight(
              Effect.logWarning("stream: the event feed is unavailable").pipe(
                Effect.annotateLogs({ error: error.message })
              ),
              new ServiceUnavailable({ error: "the event feed is unavailable right now: try again shortly" })
            )
          )
        )

        // Read decisions of this connection: agent → may read, organization → is a member.
        const decisions = new Map<string, { readonly allowed: boolean; until: number }>()
        /** Whose read decision an event needs (built on the hot path: a string, no effect). */
        const keyOf = (event: WebhookEnvelope): string =>
          event.agent_id !== undefined
            ? `agent:${event.agent_id}`
            : event.org_id !== null
              ? `org:${event.org_id}`
              : "candor"
        const decide = (event: WebhookEnvelope): Effect.Effect<boolean, StoreError> =>
          event.agent_id !== undefined
            ? access
                .agent(principal, event.agent_id, "read")
                .pipe(
                  Effect.as(true),
                  Effect.catchTags({ NotFound: () => Effect.succeed(false), Forbidden: () => Effect.succeed(false) })
                )
            : event.org_id !== null
              ? Effect.map(access.orgRole(principal, event.org_id), (role) => role !== undefined)
              : // An event of no agent and no organization: Candor's own, for the service-role key.
                Effect.succeed(principal.kind === "service")
        /** The cached decision (no effect on the hot path), else asks AccessControl and caches the answer. */
        const mayRead = (event: WebhookEnvelope, now: number) => {
          const key = keyOf(event)
          const known = decisions.get(key)
          if (known !== undefined && known.until > now) return Effect.succeed(known.allowed)
          return Effect.tap(decide(event), (allowed) =>
            Effect.sync(() => void decisions.set(key, { allowed, until: now + settings.accessCacheMs }))
          )
        }
        const selected = (event: WebhookEnvelope) =>
          typeSelected(event.type, filter.patterns) &&
          (agentId === undefined || event.agent_id === agentId) &&
          (orgId === undefined || event.org_id === orgId)

        const frames = format === "sse" ? sseFrames : ndjsonLines
        const runs = format === "sse" ? sseRuns : ndjsonRuns
        /** Whether every selected event of the chunk has a read decision still valid at `now`. */
        const decided = (chunk: Chunk.Chunk<WebhookEnvelope>, now: number) => {
          for (const event of chunk) {
            if (!selected(event)) continue
            const known = decisions.get(keyOf(event))
            if (known === undefined || known.until <= now) return false
          }
          return true
        }
        /**
         * Asks for the read decisions the chunk is missing (then cached). A cache grown past its bound
         * is emptied first, never while a chunk's decisions are being gathered (one would be lost).
         */
        const decideAll = (chunk: Chunk.Chunk<WebhookEnvelope>, now: number) =>
          Effect.suspend(() => {
            if (decisions.size > MAX_CACHED_DECISIONS) decisions.clear()
            return Effect.forEach(
              chunk,
              (event) => (selected(event) ? Effect.asVoid(mayRead(event, now)) : Effect.void),
              {
                discard: true
              }
            )
          })
        /**
         * The frames of a decided chunk this caller may read, as one buffer (none: undefined); no
         * effect and no allocation per event on this path.
         */
        const framesOf = (chunk: Chunk.Chunk<WebhookEnvelope>, now: number): Uint8Array | undefined => {
          const parts: Array<Uint8Array> = []
          let whole = true
          for (const event of chunk) {
            if (!selected(event) || decisions.get(keyOf(event))?.allowed !== true) {
              whole = false
              continue
            }
            const frame = frameOf(frames, event)
            parts.push(frame.bytes)
            streamLag.unsafeUpdate(Math.max(0, now - frame.createdMs) / 1000, [])
          }
          if (parts.length === 0) return undefined
          streamEventsSent.unsafeUpdate(parts.length, [])
          if (parts.length === 1) return parts[0]!
          return whole ? joinedRun(runs, Chunk.unsafeHead(chunk), Chunk.unsafeLast(chunk), parts) : Buffer.concat(parts)
        }

        // The response reads what the reader and the heartbeat put here; a full buffer makes the
        // reader wait (a slow client holds back its own reader, never the others).
        const out = yield* Mailbox.make<Uint8Array, BusError | StoreError>({ capacity: OUTPUT_BUFFER })
        const heartbeat = Buffer.from(heartbeatFrame(format), "utf8")
        // The first heartbeat says the position is fixed: what is published from here on will come.
        out.unsafeOffer(heartbeat)
        let wrote = false
        // A chunk at a time: what arrived together is authorised, counted and written together.
        yield* events.pipe(
          Stream.runForEachChunk((chunk) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const write = () => {
                const bytes = framesOf(chunk, now)
                if (bytes === undefined) return Effect.void
                wrote = true
                return out.unsafeOffer(bytes) ? Effect.void : Effect.asVoid(out.offer(bytes))
              }
              // Decisions not cached (or expired) are asked for first; then the chunk is written as one.
              return decided(chunk, now) ? write() : Effect.zipRight(decideAll(chunk, now), Effect.suspend(write))
            })
          ),
          Effect.exit,
          Effect.flatMap((exit) => out.done(exit)),
          Effect.forkIn(scope)
        )
        // A heartbeat when nothing was written for `heartbeatMs`: no timer on the path of events.
        yield* Effect.sleep(settings.heartbeatMs).pipe(
          Effect.zipRight(
            Effect.suspend(() => {
              const idle = !wrote
              wrote = false
              return idle ? out.offer(heartbeat) : Effect.void
            })
          ),
          Effect.forever,
          Effect.forkIn(scope)
        )
        // Access ends when the credential does: the key revoked or rotated (or its creator's role
        // lost), the JWT expired, the impersonation ended; or the filtered organization or agent no
        // longer readable. Then the stream is closed; a reconnection gets the 401 or 404 that says why.
        const recheck = (now: number) =>
          Effect.gen(function* () {
            const state = yield* credentials.liveness(principal, now)
            if (state._tag === "Ended") return state
            if (orgId !== undefined && (yield* access.orgRole(principal, orgId)) === undefined)
              return { _tag: "Ended", reason: `no longer a member of organization ${orgId}` } as const
            if (agentId !== undefined) {
              const readable = yield* access
                .agent(principal, agentId, "read")
                .pipe(
                  Effect.as(true),
                  Effect.catchTags({ NotFound: () => Effect.succeed(false), Forbidden: () => Effect.succeed(false) })
                )
              if (!readable) return { _tag: "Ended", reason: `agent ${agentId} no longer readable` } as const
            }
            // Every per-event decision is asked again from now on (kept, not dropped, so a chunk
            // being written keeps the decisions it was just given).
            for (const decision of decisions.values()) decision.until = 0
            return state
          })
        yield* untilEnded(recheck, settings.credentialCheckMs).pipe(
          Effect.tap((reason) =>
            Effect.logInfo("stream closed: its access ended").pipe(
              Effect.annotateLogs({ reason }),
              Effect.zipRight(Metric.increment(streamAccessEnded))
            )
          ),
          Effect.zipRight(out.end),
          Effect.forkIn(scope)
        )
        const output = Mailbox.toStream(out).pipe(
          Stream.tapErrorCause((cause) =>
            Effect.logWarning("stream cut short").pipe(Effect.annotateLogs({ cause: cause.toString().slice(0, 500) }))
          ),
          Stream.ensuring(close)
        )
        return HttpServerResponse.stream(output, {
          contentType: CONTENT_TYPES[format],
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      })
    )
  })
