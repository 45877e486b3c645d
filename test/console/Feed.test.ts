/**
 * The live feed's pure parts: the bounded buffer drops repeats by id and evicts the oldest; the
 * stream client resumes after a lost connection from the last event id (or, before any event, from
 * the first connection's server time), backs off on failures, starts over after a connection that
 * came up, and stops on a refusal. Driven by a fake `request` answering NDJSON bodies.
 */
import { describe, expect, it } from "@effect/vitest"
import { categoryOf, type FeedEvent, FeedBuffer } from "../../console/src/feed/FeedBuffer.js"
import {
  backoffMs,
  type ConnectionState,
  LineSplitter,
  openFeedStream,
  sinceOf,
  streamPath
} from "../../console/src/feed/FeedStream.js"

const event = (n: number): FeedEvent => ({
  id: `evt-${n}`,
  type: "agent.paused",
  created_at: "2026-11-24T12:00:00.000Z",
  org_id: null,
  agent_id: "agt-1",
  data: {}
})

describe("feed buffer", () => {
  it("keeps each event once, the newest `capacity`, newest first", () => {
    const buffer = new FeedBuffer(3)
    expect(buffer.add([event(1), event(2), event(1)])).toBe(2)
    expect(buffer.add([event(2), event(3), event(4)])).toBe(2)
    expect(buffer.newestFirst().map((e) => e.id)).toEqual(["evt-4", "evt-3", "evt-2"])
    expect(buffer.received).toBe(4)
    // An evicted id may come back (a replay from an older position): it is new to the buffer then.
    expect(buffer.add([event(1)])).toBe(1)
    expect(buffer.size).toBe(3)
    expect(buffer.newestFirst((e) => e.id !== "evt-4").map((e) => e.id)).toEqual(["evt-1", "evt-3"])
  })

  it("sorts types into the page's kinds", () => {
    expect(categoryOf("agent.killed")).toBe("containment")
    expect(categoryOf("verdict.boundary_violation")).toBe("violation")
    expect(categoryOf("drift.detected")).toBe("drift")
    expect(categoryOf("enforcement.blocked")).toBe("blocked")
    expect(categoryOf("policy.violation")).toBe("policy")
    expect(categoryOf("conscience.values_updated")).toBe("other")
  })
})

describe("feed stream", () => {
  it("builds positions, backoff and lines", () => {
    expect(streamPath({ lastId: undefined, since: undefined })).toBe("/v1/stream?format=ndjson")
    expect(streamPath({ lastId: "evt-9", since: "2026-11-24T12:00:00.000Z" })).toBe(
      "/v1/stream?format=ndjson&since=evt-9"
    )
    expect(streamPath({ lastId: undefined, since: "2026-11-24T12:00:00.000Z" })).toBe(
      "/v1/stream?format=ndjson&since=2026-11-24T12%3A00%3A00.000Z"
    )
    expect(sinceOf("Tue, 24 Nov 2026 12:00:05 GMT")).toBe("2026-11-24T12:00:04.000Z")
    expect(sinceOf(null)).toBeUndefined()
    expect([1, 2, 3, 6, 10].map((n) => backoffMs(n, () => 0.5))).toEqual([500, 1000, 2000, 15000, 15000])
    const lines = new LineSplitter()
    const bytes = new TextEncoder().encode('{"a":1}\n\n{"b"')
    expect(lines.push(bytes)).toEqual(['{"a":1}', ""])
    expect(lines.push(new TextEncoder().encode(":2}\n"))).toEqual(['{"b":2}'])
  })

  it("resumes from the last id after a loss, from the first connection's time before any event", async () => {
    const paths: Array<string> = []
    const received: Array<string> = []
    const states: Array<ConnectionState> = []
    const sleeps: Array<number> = []
    // Each connection: its lines, then the body ends (a lost connection) or the request fails.
    const script: ReadonlyArray<ReadonlyArray<string> | Error> = [
      [""],
      new Error("network error"),
      [JSON.stringify(event(1)), "", JSON.stringify(event(2))],
      [JSON.stringify(event(3))]
    ]
    let finished: () => void = () => {}
    const done = new Promise<void>((resolve) => (finished = resolve))
    const stream = openFeedStream({
      request: async (path) => {
        const step = script[paths.length]
        paths.push(path)
        if (step === undefined) {
          finished()
          return new Promise<Response>(() => {})
        }
        if (step instanceof Error) throw step
        return new Response(step.map((line) => `${line}\n`).join(""), {
          headers: { date: "Tue, 24 Nov 2026 12:00:05 GMT" }
        })
      },
      onEvent: (e) => received.push(e.id),
      onState: (state) => states.push(state),
      refusal: () => undefined,
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0.5
    })
    await done
    stream.stop()
    expect(paths).toEqual([
      "/v1/stream?format=ndjson",
      "/v1/stream?format=ndjson&since=2026-11-24T12%3A00%3A04.000Z",
      "/v1/stream?format=ndjson&since=2026-11-24T12%3A00%3A04.000Z",
      "/v1/stream?format=ndjson&since=evt-2",
      "/v1/stream?format=ndjson&since=evt-3"
    ])
    expect(received).toEqual(["evt-1", "evt-2", "evt-3"])
    // Up then lost: 0.5 s; a failed attempt after it: 1 s; up again: back to 0.5 s.
    expect(sleeps).toEqual([500, 1000, 500, 500])
    expect(states.filter((s) => s._tag === "live")).toHaveLength(3)
  })

  it("stops on a refusal (a revoked credential) instead of retrying", async () => {
    const states: Array<ConnectionState> = []
    let calls = 0
    const stopped = new Promise<void>((resolve) => {
      openFeedStream({
        request: async () => {
          calls++
          throw new Error("token expired")
        },
        onEvent: () => {},
        onState: (state) => {
          states.push(state)
          if (state._tag === "stopped") resolve()
        },
        refusal: (error) => (error instanceof Error ? error.message : undefined),
        sleep: async () => {}
      })
    })
    await stopped
    expect(calls).toBe(1)
    expect(states.at(-1)).toEqual({ _tag: "stopped", reason: "token expired" })
  })
})
