/**
 * The gateway's `AgentState` on NATS KV, bucket `<prefix>-agent-state` (`candor-agent-state` by default),
 * shared by every gateway and written by the actors.
 *
 * - `settings.<agent_id>`: the agent's settings as JSON, only what was ever set (defaults fill the rest
 *   on read, so a changed default applies to agents that never overrode it). `update` merges a patch
 *   into the stored JSON with compare-and-set, retrying on a concurrent write. Values are decoded with
 *   the `AgentSettings` schema: one that does not decode (another version's, or damaged) is logged and
 *   skipped, so the copy keeps the agent's last good settings; a write merges over its members all the
 *   same (it need not understand them), so a patch that replaces the bad member makes it readable again.
 * - `key.<key_hash>`: a provider key's settings (`KeySettings`: its containment with scope `key`), as
 *   JSON, read, merged and decoded like an agent's settings.
 * - `tools.<agent_id>`: when each of the agent's tools was first seen (ToolSightings.ts: at most 1,000
 *   pairs of tool and unix ms), the clock of the policy's grace period. `noteTools` notes a new tool in
 *   the copy at once and writes it without the request waiting: read, merge (a tool already stored
 *   keeps the earlier time, so gateways racing agree on the first), compare-and-set, retried; one
 *   write per agent at a time, which takes whatever was noted meanwhile. A value that does not decode
 *   is logged and read as no sightings (its tools are new again), and the next write replaces it. A
 *   write that fails past its retries is logged; its tools stay noted here and go with the next one.
 * - `nudge.<agent_id>`: the pending nudge, as text. `takeNudge` deletes it with compare-and-set on the
 *   revision it read, so when several gateways race for it exactly one injects it.
 *
 * Each instance keeps a local copy fed by `kv.watch()`, so `get` (on every request) never does I/O, and
 * `takeNudge` only goes to the server when a nudge is known to be waiting. `refresh` reads one
 * agent's value from the server, for the rare request the copy may not be up to date for yet. The layer is ready once the
 * copy holds everything stored when it started.
 */
import type { KvEntry } from "@nats-io/kv"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as PubSub from "effect/PubSub"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { AgentSettings, AgentState, defaultKeySettings, defaultSettings, KeySettings } from "./AgentState.js"
import { BusError } from "./BusError.js"
import { atStart, isWrongLastSequence, openBucket, tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { agentStateBucket, DEFAULT_PREFIX } from "./Subjects.js"
import {
  mergeToolSightings,
  parseToolSightings,
  stringifyToolSightings,
  type ToolSightings,
  ToolSightingsCopy
} from "./ToolSightings.js"

export interface KvAgentStateOptions {
  /** CANDOR_NATS_PREFIX. */
  readonly prefix?: string
  /** CANDOR_NATS_REPLICAS: copies of the bucket (default 1). */
  readonly replicas?: number
}

/** A stored value: the members ever set, as JSON (defaults fill the rest). */
const decodeStored = Schema.decodeUnknownEither(Schema.parseJson(Schema.partialWith(AgentSettings, { exact: true })), {
  errors: "all"
})

const decodeStoredKey = Schema.decodeUnknownEither(Schema.parseJson(Schema.partialWith(KeySettings, { exact: true })), {
  errors: "all"
})

/** What a write merges into: any JSON object, understood or not. */
const decodeMembers = Schema.decodeUnknown(
  Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
)

/** Where a value differs from the format, without its content. */
const failedPaths = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => issue.path.join(".") || "(value)")
    .join(", ")

const SETTINGS = "settings."
const KEY = "key."

/** A key's settings in a log line: a prefix of its hash, enough to find it, not the whole identity. */
const keyLogName = (keyHash: string): string => `key ${keyHash.slice(0, 8)}…`
const NUDGE = "nudge."
const TOOLS = "tools."

const NO_SIGHTINGS: ToolSightings = new Map()

/** A key's latest known revision; `value` undefined once deleted (a tombstone keeps stale puts out). */
interface Known<A> {
  readonly revision: number
  readonly value: A | undefined
}

/** A write lost to a concurrent one (or a transient failure) is simply tried again. */
const writeRetry = Schedule.exponential("20 millis").pipe(Schedule.intersect(Schedule.recurs(8)))

const watchRetry = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

export const make = (
  options: KvAgentStateOptions = {}
): Effect.Effect<AgentState["Type"], BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const nc = yield* NatsConnection
    const kv = yield* atStart(
      openBucket(nc, agentStateBucket(options.prefix ?? DEFAULT_PREFIX), {
        history: 1,
        replicas: options.replicas ?? 1
      })
    )
    const settings = new Map<string, Known<AgentSettings>>()
    const keys = new Map<string, Known<KeySettings>>()
    const nudges = new Map<string, Known<string>>()
    const tools = new ToolSightingsCopy()
    // Every settings entry the watch brings (or this instance writes) names an agent that changed.
    const changed = yield* PubSub.unbounded<string>()

    const learn = <A>(known: Map<string, Known<A>>, agentId: string, revision: number, value: A | undefined): void => {
      const current = known.get(agentId)
      if (current === undefined || current.revision < revision) known.set(agentId, { revision, value })
    }

    const parseSettings = (json: string): Either.Either<AgentSettings, ParseResult.ParseError> =>
      Either.map(decodeStored(json), (stored) => ({ ...defaultSettings, ...stored }))
    const parseKeySettings = (json: string): Either.Either<KeySettings, ParseResult.ParseError> =>
      Either.map(decodeStoredKey(json), (stored) => ({ ...defaultKeySettings, ...stored }))

    // The watch loop is plain async code: its warnings go through this fiber's logger.
    const runtime = yield* Effect.runtime<never>()
    const skipped = (agentId: string, error: ParseResult.ParseError): void =>
      Runtime.runSync(runtime)(
        Effect.logWarning("agent settings that do not decode skipped; the last good ones stay").pipe(
          Effect.annotateLogs({ agent_id: agentId, paths: failedPaths(error) })
        )
      )

    /** A stored value's sightings; one that does not decode is logged and read as none. */
    const sightingsOf = (agentId: string, json: string): ToolSightings =>
      Either.getOrElse(parseToolSightings(json), (error) => {
        Runtime.runSync(runtime)(
          Effect.logWarning("tool sightings that do not decode read as none; the next write replaces them").pipe(
            Effect.annotateLogs({ agent_id: agentId, paths: failedPaths(error) })
          )
        )
        return NO_SIGHTINGS
      })

    const apply = (entry: KvEntry): void => {
      const put = entry.operation === "PUT"
      if (entry.key.startsWith(SETTINGS)) {
        const agentId = entry.key.slice(SETTINGS.length)
        changed.unsafeOffer(agentId)
        if (!put) return learn(settings, agentId, entry.revision, undefined)
        Either.match(parseSettings(entry.string()), {
          onLeft: (error) => skipped(agentId, error),
          onRight: (value) => learn(settings, agentId, entry.revision, value)
        })
      } else if (entry.key.startsWith(KEY)) {
        const keyHash = entry.key.slice(KEY.length)
        if (!put) return learn(keys, keyHash, entry.revision, undefined)
        Either.match(parseKeySettings(entry.string()), {
          onLeft: (error) => skipped(keyLogName(keyHash), error),
          onRight: (value) => learn(keys, keyHash, entry.revision, value)
        })
      } else if (entry.key.startsWith(TOOLS)) {
        const agentId = entry.key.slice(TOOLS.length)
        tools.learn(agentId, entry.revision, put ? sightingsOf(agentId, entry.string()) : undefined)
      } else if (entry.key.startsWith(NUDGE)) {
        learn(nudges, entry.key.slice(NUDGE.length), entry.revision, put ? entry.string() : undefined)
      }
    }

    // Ready once the copy has caught up with the bucket as it was when we started.
    const status = yield* atStart(tryNats("agent state status", () => kv.status()))
    const caughtUpAt = status.values === 0 ? 0 : status.streamInfo.state.last_seq
    const ready = yield* Deferred.make<void>()
    if (caughtUpAt === 0) yield* Deferred.succeed(ready, undefined)

    const watchOnce = Effect.acquireUseRelease(
      tryNats("watch agent state", () => kv.watch()),
      (entries) =>
        tryNats("watch agent state", async () => {
          for await (const entry of entries) {
            apply(entry)
            if (entry.revision >= caughtUpAt) Deferred.unsafeDone(ready, Effect.void)
          }
        }),
      (entries) => Effect.sync(() => entries.stop())
    )
    yield* watchOnce.pipe(
      Effect.zipRight(Effect.fail(new BusError({ operation: "watch agent state", cause: "watch ended" }))),
      Effect.tapError((error) =>
        Effect.logWarning("agent state watch ended; resuming").pipe(Effect.annotateLogs({ error: error.message }))
      ),
      Effect.retry({ schedule: watchRetry, while: () => !nc.isClosed() }),
      Effect.ignore,
      Effect.forkScoped
    )
    yield* Deferred.await(ready).pipe(
      Effect.timeoutFail({
        duration: "30 seconds",
        onTimeout: () => new BusError({ operation: "load agent state", cause: "timed out" })
      })
    )

    /**
     * Merges `patch` into the JSON stored at `key` with compare-and-set (retried on a concurrent
     * write) and learns the result into the local copy; answers the stored JSON.
     */
    const writeMerged = (key: string, patch: object, label: string, name: string) =>
      Effect.gen(function* () {
        const entry = yield* tryNats(`read ${label}`, () => kv.get(key))
        const stored =
          entry?.operation === "PUT"
            ? yield* decodeMembers(entry.string()).pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning(`stored ${label} are not a JSON object; replaced by the patch`).pipe(
                    Effect.annotateLogs({ entry: name, paths: failedPaths(error) }),
                    Effect.as({})
                  )
                )
              )
            : {}
        // Members set to undefined drop out of the JSON: the default applies again.
        const json = JSON.stringify({ ...stored, ...patch })
        const revision = yield* tryNats(`write ${label}`, () =>
          entry === null ? kv.create(key, json) : kv.update(key, json, entry.revision)
        )
        return { json, revision }
      }).pipe(Effect.retry(writeRetry))

    const update: AgentState["Type"]["update"] = (agentId, patch) =>
      Effect.gen(function* () {
        const { json, revision } = yield* writeMerged(SETTINGS + agentId, patch, "agent settings", agentId)
        Either.match(parseSettings(json), {
          onLeft: (error) => skipped(agentId, error),
          onRight: (value) => learn(settings, agentId, revision, value)
        })
        yield* PubSub.publish(changed, agentId)
      })

    const updateKey: AgentState["Type"]["updateKey"] = (keyHash, patch) =>
      Effect.gen(function* () {
        const name = keyLogName(keyHash)
        const { json, revision } = yield* writeMerged(KEY + keyHash, patch, "key settings", name)
        Either.match(parseKeySettings(json), {
          onLeft: (error) => skipped(name, error),
          onRight: (value) => learn(keys, keyHash, revision, value)
        })
      })

    /**
     * One read-merge-write of what is noted for the agent (all of it, as it is when read), learned
     * into the copy; retried on a concurrent write.
     */
    const writeSightings = (agentId: string) =>
      Effect.gen(function* () {
        const key = TOOLS + agentId
        const noted = new Map(tools.notedOf(agentId))
        const entry = yield* tryNats("read tool sightings", () => kv.get(key))
        const stored = entry?.operation === "PUT" ? sightingsOf(agentId, entry.string()) : NO_SIGHTINGS
        const { changed, merged } = mergeToolSightings(stored, noted)
        // Already stored, as early or earlier: nothing to write.
        if (!changed) {
          if (entry !== null) tools.learn(agentId, entry.revision, entry.operation === "PUT" ? stored : undefined)
          return
        }
        const json = stringifyToolSightings(merged)
        const revision = yield* tryNats("write tool sightings", () =>
          entry === null ? kv.create(key, json) : kv.update(key, json, entry.revision)
        )
        tools.learn(agentId, revision, merged)
      }).pipe(Effect.retry(writeRetry))

    /** Agents whose sightings are being written; a write goes on while anything is noted. */
    const writing = new Set<string>()
    const runWrite = yield* FiberSet.makeRuntime<never, void, never>()
    const writeNoted = (agentId: string): Effect.Effect<void, BusError> =>
      Effect.suspend(() => {
        if (tools.notedOf(agentId).size === 0) return Effect.sync(() => void writing.delete(agentId))
        return Effect.zipRight(writeSightings(agentId), writeNoted(agentId))
      })

    const noteTools: AgentState["Type"]["noteTools"] = (agentId, seen, nowMs) => {
      if (!tools.note(agentId, seen, nowMs) || writing.has(agentId)) return
      writing.add(agentId)
      runWrite(
        writeNoted(agentId).pipe(
          Effect.catchAll((error) =>
            Effect.logWarning("tool sightings not written; they stay noted here and go with the next write").pipe(
              Effect.annotateLogs({ agent_id: agentId, error: error.message })
            )
          ),
          Effect.ensuring(Effect.sync(() => void writing.delete(agentId)))
        )
      )
    }

    const takeNudge: AgentState["Type"]["takeNudge"] = (agentId) =>
      Effect.suspend(() => {
        const known = nudges.get(agentId)
        const text = known?.value
        if (known === undefined || text === undefined) return Effect.succeed(undefined)
        return tryNats("take nudge", () => kv.delete(NUDGE + agentId, { previousSeq: known.revision })).pipe(
          Effect.zipRight(
            Effect.sync((): string | undefined => {
              // Taken: forget it now rather than when the watch brings the deletion.
              if (nudges.get(agentId) === known) nudges.set(agentId, { revision: known.revision, value: undefined })
              return text
            })
          ),
          // Another gateway took it first (or a newer nudge replaced it: the watch will bring that one).
          Effect.catchAll((error) =>
            isWrongLastSequence(error)
              ? Effect.succeed(undefined)
              : Effect.logWarning("nudge not taken").pipe(
                  Effect.annotateLogs({ error: error.message }),
                  Effect.as(undefined)
                )
          )
        )
      })

    const setNudge: AgentState["Type"]["setNudge"] = (agentId, text) =>
      tryNats("set nudge", () => kv.put(NUDGE + agentId, text)).pipe(
        Effect.tap((revision) => Effect.sync(() => learn(nudges, agentId, revision, text))),
        Effect.retry(writeRetry),
        Effect.asVoid,
        Effect.orDie
      )

    /** One read of the server's current value; on a failure the copy's value stands (logged). */
    const refresh: NonNullable<AgentState["Type"]["refresh"]> = (agentId) =>
      tryNats("read agent settings", () => kv.get(SETTINGS + agentId)).pipe(
        Effect.tap((entry) =>
          Effect.sync(() => {
            if (entry === null) return
            if (entry.operation !== "PUT") return learn(settings, agentId, entry.revision, undefined)
            Either.match(parseSettings(entry.string()), {
              onLeft: (error) => skipped(agentId, error),
              onRight: (value) => learn(settings, agentId, entry.revision, value)
            })
          })
        ),
        Effect.catchAll((error) =>
          Effect.logWarning("agent settings not refreshed; the local copy stands").pipe(
            Effect.annotateLogs({ agent_id: agentId, error: error.message })
          )
        ),
        Effect.map(() => settings.get(agentId)?.value ?? defaultSettings)
      )

    return {
      get: (agentId) => Effect.sync(() => settings.get(agentId)?.value ?? defaultSettings),
      refresh,
      peek: (agentId) => settings.get(agentId)?.value ?? defaultSettings,
      peekKey: (keyHash) => keys.get(keyHash)?.value ?? defaultKeySettings,
      updateKey,
      nudgePending: (agentId) => nudges.get(agentId)?.value !== undefined,
      toolsFirstSeen: (agentId) => tools.lookup(agentId),
      noteTools,
      update,
      takeNudge,
      setNudge,
      subscribeChanges: PubSub.subscribe(changed)
    }
  })

/** `AgentState` on the shared KV bucket; needs the process's `NatsConnection`. */
export const layer = (options: KvAgentStateOptions = {}): Layer.Layer<AgentState, BusError, NatsConnection> =>
  Layer.scoped(AgentState, make(options))
