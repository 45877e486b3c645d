/**
 * Agent state on the real NATS KV: two gateways (two layer instances, each with its own connection)
 * on one bucket see each other's writes through their watched copies, merge patches, and race for
 * a nudge that exactly one of them gets. Tools' first sightings (the policy's grace period) outlive
 * an instance and are shared by all, the earliest time kept when two note a tool at once.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { Kvm } from "@nats-io/kv"
import { AgentState, defaultKeySettings, defaultSettings } from "../../../adapters/bus/AgentState.js"
import * as KvAgentState from "../../../adapters/bus/KvAgentState.js"
import { NatsConnection } from "../../../adapters/bus/NatsConnection.js"
import { agentStateBucket } from "../../../adapters/bus/Subjects.js"
import { LONG_AGO, MAX_TOOLS_PER_AGENT } from "../../../adapters/bus/ToolSightings.js"
import { NatsTest, removeNatsResources, testNatsUrl, uniquePrefix, waitUntil } from "./NatsSupport.js"
import { describeIntegration } from "../../support/Integration.js"
import { tcpProxy } from "../../integration/TcpProxy.js"

/** Writes a raw value into the bucket, as another version (or a damaged write) would. */
const putRaw = (prefix: string, key: string, value: string) =>
  Effect.flatMap(NatsConnection, (nc) =>
    Effect.promise(async () => (await new Kvm(nc).create(agentStateBucket(prefix), { history: 1 })).put(key, value))
  ).pipe(Effect.provide(NatsTest))

/** The raw value stored at `key`, or null. */
const getRaw = (prefix: string, key: string) =>
  Effect.flatMap(NatsConnection, (nc) =>
    Effect.promise(async () => {
      const entry = await (await new Kvm(nc).open(agentStateBucket(prefix))).get(key)
      return entry?.operation === "PUT" ? entry.string() : null
    })
  ).pipe(Effect.provide(NatsTest))

const named = (...names: ReadonlyArray<string>) => names.map((name) => ({ name }))

/** `tool`'s first sighting for the agent in `state`'s copy, unix ms. */
const firstSeen = (state: AgentState["Type"], agentId: string, tool: string) =>
  state.toolsFirstSeen(agentId)(tool)?.getTime()

/** A fresh AgentState instance on the prefix's bucket, with a connection of its own. */
const gateway = (prefix: string) =>
  Effect.map(Layer.build(KvAgentState.layer({ prefix }).pipe(Layer.provide(NatsTest))), (ctx) =>
    Context.get(ctx, AgentState)
  )

const withPrefix = <A, E, R>(body: (prefix: string) => Effect.Effect<A, E, R>) => {
  const prefix = uniquePrefix("kv")
  return Effect.gen(function* () {
    yield* Effect.addFinalizer(() => removeNatsResources(prefix).pipe(Effect.provide(NatsTest)))
    return yield* body(prefix)
  }).pipe(Effect.scoped)
}

describeIntegration("nats", "KvAgentState", () => {
  it.live("an update made by one instance is seen by the other, merged into what was stored", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        expect(yield* b.get("agt-1")).toEqual(defaultSettings)
        yield* a.update("agt-1", { mode: "enforce" })
        expect((yield* a.get("agt-1")).mode).toBe("enforce") // the writer sees its own write at once
        yield* waitUntil(
          "b to see the mode",
          Effect.map(b.get("agt-1"), (s) => s.mode === "enforce")
        )
        yield* b.update("agt-1", { failurePolicy: "fail_closed" })
        yield* waitUntil(
          "a to see both patches",
          Effect.map(a.get("agt-1"), (s) => s.failurePolicy === "fail_closed")
        )
        expect(yield* a.get("agt-1")).toEqual({ ...defaultSettings, mode: "enforce", failurePolicy: "fail_closed" })
        expect(yield* b.get("agt-2")).toEqual(defaultSettings)
      })
    )
  )

  it.live("an update by one instance is announced to the change subscribers of both", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        const atA = yield* a.subscribeChanges
        const atB = yield* b.subscribeChanges
        yield* a.update("agt-changed", { conscienceValues: [{ type: "HOPE", name: "h", content: "c" }] })
        expect(yield* Queue.take(atA)).toBe("agt-changed")
        expect(yield* Queue.take(atB).pipe(Effect.timeout("5 seconds"))).toBe("agt-changed")
      })
    )
  )

  it.live("refresh reads the server's value at once (a scoped transaction just opened) and the copy learns it", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        const transactions = [
          { transaction_id: "txn-kv", tools: ["issue_refund"], expires_at: "2026-03-01T13:00:00.000Z" }
        ]
        yield* a.update("agt-txn", { transactions })
        // Whether or not b's watch has brought it yet, one refresh has it, and so has b's copy after.
        expect((yield* b.refresh!("agt-txn")).transactions).toEqual(transactions)
        expect((yield* b.get("agt-txn")).transactions).toEqual(transactions)
        expect(yield* b.refresh!("agt-none")).toEqual(defaultSettings)
      })
    )
  )

  it.live("a patch of undefined clears a member back to its default", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        const containment = {
          status: "paused" as const,
          reason: "drift",
          contained_at: "2026-01-01T00:00:00Z",
          contained_by: "system"
        }
        yield* a.update("agt-c", { containment })
        yield* waitUntil(
          "b to see the containment",
          Effect.map(b.get("agt-c"), (s) => s.containment !== undefined)
        )
        expect((yield* b.get("agt-c")).containment).toEqual(containment)
        yield* a.update("agt-c", { containment: undefined })
        yield* waitUntil(
          "b to see it lifted",
          Effect.map(b.get("agt-c"), (s) => s.containment === undefined)
        )
      })
    )
  )

  it.live(
    "a key's containment written by one instance is in the other's copy (a map lookup), and in a late one's",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          const a = yield* gateway(prefix)
          const b = yield* gateway(prefix)
          const keyHash = "cd".repeat(32)
          expect(b.peekKey(keyHash)).toBe(defaultKeySettings)
          const containment = {
            status: "paused" as const,
            reason: "key scope",
            contained_at: "2026-01-01T00:00:00Z",
            contained_by: "owner"
          }
          yield* a.updateKey(keyHash, { containment })
          expect(a.peekKey(keyHash)).toEqual({ containment }) // the writer sees its own write at once
          yield* waitUntil(
            "b to see the key contained",
            Effect.sync(() => b.peekKey(keyHash).containment !== undefined)
          )
          expect(b.peekKey(keyHash)).toEqual({ containment })
          expect((yield* b.get(keyHash)).containment).toBeUndefined() // keys and agents do not mix
          const late = yield* gateway(prefix)
          expect(late.peekKey(keyHash)).toEqual({ containment })
          yield* a.updateKey(keyHash, { containment: undefined })
          yield* waitUntil(
            "b to see it lifted",
            Effect.sync(() => b.peekKey(keyHash).containment === undefined)
          )
        })
      )
  )

  it.live("a new instance starts with everything already stored", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        for (let i = 0; i < 20; i++) yield* a.update(`agt-${i}`, { mode: "nudge" })
        yield* a.setNudge("agt-0", "reconsider")
        const late = yield* gateway(prefix)
        for (let i = 0; i < 20; i++) expect((yield* late.get(`agt-${i}`)).mode).toBe("nudge")
        expect(yield* late.takeNudge("agt-0")).toBe("reconsider")
      })
    )
  )

  it.live("a nudge is taken exactly once when two instances race for it", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        for (let round = 0; round < 10; round++) {
          const text = `nudge ${round}`
          yield* a.setNudge("agt-n", text)
          // The watch delivers in order: once b sees a later write of a's, it knows of the nudge too.
          const reason = `round ${round}`
          yield* a.update("agt-sync", {
            containment: { status: "paused", reason, contained_at: "2026-01-01T00:00:00Z", contained_by: "system" }
          })
          yield* waitUntil(
            "b to catch up",
            Effect.map(b.get("agt-sync"), (s) => s.containment?.reason === reason)
          )
          const results = yield* Effect.all([a.takeNudge("agt-n"), b.takeNudge("agt-n")], { concurrency: 2 })
          expect(results.filter((r) => r !== undefined)).toEqual([text])
          expect([yield* a.takeNudge("agt-n"), yield* b.takeNudge("agt-n")]).toEqual([undefined, undefined])
        }
      })
    )
  )

  it.live("a stored value that is not agent settings is skipped, the last good one stays, and a patch repairs it", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        const containment = {
          status: "paused" as const,
          reason: "drift",
          contained_at: "2026-01-01T00:00:00Z",
          contained_by: "system"
        }
        yield* a.update("agt-m", { containment })
        yield* waitUntil(
          "b to see the containment",
          Effect.map(b.get("agt-m"), (s) => s.containment !== undefined)
        )
        // An unknown mode: not settings this version can enforce. The copy keeps the contained settings.
        yield* putRaw(prefix, "settings.agt-m", JSON.stringify({ containment, mode: "shout" }))
        yield* putRaw(prefix, "settings.agt-marker", JSON.stringify({ mode: "enforce" }))
        yield* waitUntil(
          "b to pass the bad value",
          Effect.map(b.get("agt-marker"), (s) => s.mode === "enforce")
        )
        expect(yield* b.get("agt-m")).toEqual({ ...defaultSettings, containment })
        // A write merges over the members it does not understand; replacing the bad one makes the value readable.
        yield* a.update("agt-m", { mode: "nudge" })
        yield* waitUntil(
          "b to read the repaired value",
          Effect.map(b.get("agt-m"), (s) => s.mode === "nudge")
        )
        expect(yield* b.get("agt-m")).toEqual({ ...defaultSettings, containment, mode: "nudge" })
        // Not even JSON: skipped as well, and a new instance starts without it.
        yield* putRaw(prefix, "settings.agt-j", "not json")
        const late = yield* gateway(prefix)
        expect(yield* late.get("agt-j")).toEqual(defaultSettings)
        yield* late.update("agt-j", { failurePolicy: "fail_closed" })
        expect(yield* late.get("agt-j")).toEqual({ ...defaultSettings, failurePolicy: "fail_closed" })
      })
    )
  )

  it.live("a gateway cut off from NATS keeps the containment it knew (never active), and catches up when back", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const target = new URL(testNatsUrl())
        const proxy = yield* tcpProxy({ host: target.hostname, port: Number(target.port || 4222) })
        const a = yield* gateway(prefix)
        const cut = yield* Effect.map(
          Layer.build(
            KvAgentState.layer({ prefix }).pipe(
              Layer.provide(
                NatsConnection.layer(`nats://127.0.0.1:${proxy.port}`, {
                  name: "candor-test-cut",
                  reconnectWaitMs: 50
                }).pipe(Layer.orDie)
              )
            )
          ),
          (ctx) => Context.get(ctx, AgentState)
        )
        const paused = {
          status: "paused" as const,
          reason: "review",
          contained_at: "2026-01-01T00:00:00Z",
          contained_by: "u"
        }
        yield* a.update("agt-held", { containment: paused })
        yield* waitUntil(
          "the cut gateway to see the pause",
          Effect.map(cut.get("agt-held"), (s) => s.containment !== undefined)
        )

        yield* proxy.down
        // While it keeps failing to reconnect, the last state it knew stays in force.
        const refusedBefore = proxy.refused()
        yield* a.update("agt-held", { containment: undefined })
        yield* a.update("agt-new", { containment: { ...paused, status: "killed" } })
        yield* waitUntil(
          "several reconnect attempts",
          Effect.sync(() => proxy.refused() >= refusedBefore + 3)
        )
        expect((yield* cut.get("agt-held")).containment).toEqual(paused)

        // Back: it catches up with what changed meanwhile.
        yield* proxy.up
        yield* waitUntil(
          "the cut gateway to catch up",
          Effect.map(
            Effect.all([cut.get("agt-held"), cut.get("agt-new")]),
            ([held, added]) => held.containment === undefined && added.containment?.status === "killed"
          )
        )
      })
    )
  )

  it.live("a containment stored in the older shape still contains the agent for a gateway started later", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const since = "2026-01-01T00:00:00Z"
        yield* putRaw(
          prefix,
          "settings.agt-old",
          JSON.stringify({ containment: { status: "paused", reason: "auto", since } })
        )
        const late = yield* gateway(prefix)
        expect((yield* late.get("agt-old")).containment).toEqual({
          status: "paused",
          reason: "auto",
          contained_at: since,
          contained_by: "system"
        })
      })
    )
  )
  it.live(
    "a tool's first sighting noted by one instance is seen by another, and by one started after (a restart)",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          const a = yield* gateway(prefix)
          const b = yield* gateway(prefix)
          a.noteTools("agt-t", named("search", "__proto__"), 1_000)
          expect(firstSeen(a, "agt-t", "search")).toBe(1_000) // the noting instance has it at once
          yield* waitUntil(
            "b to see a's sightings",
            Effect.sync(() => firstSeen(b, "agt-t", "search") === 1_000 && firstSeen(b, "agt-t", "__proto__") === 1_000)
          )
          const late = yield* gateway(prefix)
          expect(firstSeen(late, "agt-t", "search")).toBe(1_000)
          expect(firstSeen(late, "agt-t", "__proto__")).toBe(1_000)
          // Seen again later, by any instance: the first time stands.
          late.noteTools("agt-t", named("search"), 9_000)
          expect(firstSeen(late, "agt-t", "search")).toBe(1_000)
          expect(firstSeen(late, "agt-t", "fetch")).toBeUndefined()
        })
      )
  )

  it.live("two instances noting the same tool at once agree on the earlier time", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        // In one turn: neither write (nor the other's watch) can have happened in between.
        yield* Effect.sync(() => {
          a.noteTools("agt-r", named("later-first"), 2_000)
          b.noteTools("agt-r", named("later-first"), 1_000)
          a.noteTools("agt-r", named("earlier-first"), 1_000)
          b.noteTools("agt-r", named("earlier-first"), 2_000)
        })
        for (const state of [a, b])
          yield* waitUntil(
            "both to agree on the earlier times",
            Effect.sync(
              () =>
                firstSeen(state, "agt-r", "later-first") === 1_000 &&
                firstSeen(state, "agt-r", "earlier-first") === 1_000
            )
          )
        const stored = JSON.parse((yield* getRaw(prefix, "tools.agt-r"))!) as Array<[string, number]>
        expect(new Map(stored)).toEqual(
          new Map([
            ["later-first", 1_000],
            ["earlier-first", 1_000]
          ])
        )
      })
    )
  )

  it.live("an agent's 1,000 tools fill only its own record; its 1,001st gets no grace on any instance", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        const b = yield* gateway(prefix)
        const tools = Array.from({ length: MAX_TOOLS_PER_AGENT }, (_, i) => ({ name: `tool_${i}` }))
        a.noteTools("agt-full", tools, 1_000)
        a.noteTools("agt-other", named("tool_0"), 2_000)
        yield* waitUntil(
          "b to see both agents' sightings",
          Effect.sync(
            () =>
              firstSeen(b, "agt-full", `tool_${MAX_TOOLS_PER_AGENT - 1}`) === 1_000 &&
              firstSeen(b, "agt-other", "tool_0") === 2_000
          )
        )
        expect(b.toolsFirstSeen("agt-full")("one_more")).toBe(LONG_AGO)
        b.noteTools("agt-full", named("one_more"), 3_000)
        expect(b.toolsFirstSeen("agt-full")("one_more")).toBe(LONG_AGO)
        // Another agent's new tool is new, and recorded.
        expect(b.toolsFirstSeen("agt-other")("one_more")).toBeUndefined()
        b.noteTools("agt-other", named("one_more"), 3_000)
        yield* waitUntil(
          "a to see agt-other's new tool",
          Effect.sync(() => firstSeen(a, "agt-other", "one_more") === 3_000)
        )
        const late = yield* gateway(prefix)
        expect(late.toolsFirstSeen("agt-full")("one_more")).toBe(LONG_AGO)
        expect(JSON.parse((yield* getRaw(prefix, "tools.agt-full"))!)).toHaveLength(MAX_TOOLS_PER_AGENT)
      })
    )
  )

  it.live("stored sightings that do not decode are read as none, and the next sighting replaces them", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const a = yield* gateway(prefix)
        yield* putRaw(prefix, "tools.agt-bad", "not json")
        yield* putRaw(prefix, "tools.agt-object", JSON.stringify({ search: 1 }))
        // Started after the bad values: it has loaded them (and a's watch has brought them) without failing.
        const late = yield* gateway(prefix)
        expect(late.toolsFirstSeen("agt-bad")("search")).toBeUndefined()
        expect(late.toolsFirstSeen("agt-object")("search")).toBeUndefined()
        late.noteTools("agt-bad", named("search"), 3_000)
        late.noteTools("agt-object", named("search"), 4_000)
        yield* waitUntil(
          "a's watch to bring the replacements",
          Effect.sync(
            () => firstSeen(a, "agt-bad", "search") === 3_000 && firstSeen(a, "agt-object", "search") === 4_000
          )
        )
        expect(JSON.parse((yield* getRaw(prefix, "tools.agt-bad"))!)).toEqual([["search", 3_000]])
      })
    )
  )
})
