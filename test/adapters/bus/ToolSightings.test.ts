/**
 * Tools' first sightings (the policy's grace period): bounded per agent, each agent apart, a tool
 * that cannot be recorded gets no grace, the stored format decodes only what it should, and two
 * records merge to the earliest time. The in-memory `AgentState` keeps them the same way.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import {
  LONG_AGO,
  MAX_TOOL_NAME_CHARS,
  MAX_TOOLS_PER_AGENT,
  mergeToolSightings,
  parseToolSightings,
  stringifyToolSightings,
  ToolSightingsCopy
} from "../../../adapters/bus/ToolSightings.js"

const named = (...names: ReadonlyArray<string>) => names.map((name) => ({ name }))
const many = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i}` }))

describe("ToolSightingsCopy", () => {
  it("a tool is new until noted, then keeps its first time; noting it again changes nothing", () => {
    const copy = new ToolSightingsCopy()
    expect(copy.lookup("agt-a")("search")).toBeUndefined()
    expect(copy.note("agt-a", named("search"), 1_000)).toBe(true)
    expect(copy.note("agt-a", named("search"), 2_000)).toBe(false)
    expect(copy.lookup("agt-a")("search")).toEqual(new Date(1_000))
    expect(copy.lookup("agt-b")("search")).toBeUndefined()
  })

  it("an agent's 1,000 tools fill its record only: its 1,001st gets no grace, another agent's is new", () => {
    const copy = new ToolSightingsCopy()
    expect(copy.note("agt-a", many("t", MAX_TOOLS_PER_AGENT), 1_000)).toBe(true)
    expect(copy.note("agt-a", named("one-more"), 2_000)).toBe(false)
    expect(copy.lookup("agt-a")("one-more")).toBe(LONG_AGO)
    expect(copy.lookup("agt-a")(`t${MAX_TOOLS_PER_AGENT - 1}`)).toEqual(new Date(1_000))
    expect(copy.lookup("agt-b")("one-more")).toBeUndefined()
    expect(copy.note("agt-b", named("one-more"), 3_000)).toBe(true)
    expect(copy.lookup("agt-b")("one-more")).toEqual(new Date(3_000))
  })

  it("a name too long to record gets no grace", () => {
    const copy = new ToolSightingsCopy()
    const long = "x".repeat(MAX_TOOL_NAME_CHARS + 1)
    expect(copy.note("agt-a", named(long), 1_000)).toBe(false)
    expect(copy.lookup("agt-a")(long)).toBe(LONG_AGO)
    expect(copy.note("agt-a", named("x".repeat(MAX_TOOL_NAME_CHARS)), 1_000)).toBe(true)
  })

  it("what is learned as stored wins over what was noted, and is no longer waiting to be written", () => {
    const copy = new ToolSightingsCopy()
    copy.note("agt-a", named("search", "fetch"), 2_000)
    copy.learn("agt-a", 5, new Map([["search", 1_000]]))
    expect(copy.lookup("agt-a")("search")).toEqual(new Date(1_000))
    expect([...copy.notedOf("agt-a").keys()]).toEqual(["fetch"])
    // An older revision does not replace what is known.
    copy.learn("agt-a", 4, new Map([["search", 500]]))
    expect(copy.lookup("agt-a")("search")).toEqual(new Date(1_000))
  })

  it("a tool stored later than noted here (another gateway wrote first) stays noted, and the earlier time is answered", () => {
    const copy = new ToolSightingsCopy()
    copy.note("agt-a", named("search"), 1_000)
    copy.learn("agt-a", 1, new Map([["search", 2_000]]))
    expect(copy.lookup("agt-a")("search")).toEqual(new Date(1_000))
    expect(copy.notedOf("agt-a")).toEqual(new Map([["search", 1_000]]))
    copy.learn("agt-a", 2, new Map([["search", 1_000]]))
    expect(copy.notedOf("agt-a").size).toBe(0)
  })

  it("a full stored record leaves no room for what was noted: it gets no grace", () => {
    const copy = new ToolSightingsCopy()
    copy.note("agt-a", named("late"), 2_000)
    copy.learn("agt-a", 1, new Map(many("t", MAX_TOOLS_PER_AGENT).map(({ name }) => [name, 1_000])))
    expect(copy.notedOf("agt-a").size).toBe(0)
    expect(copy.lookup("agt-a")("late")).toBe(LONG_AGO)
  })
})

describe("stored tool sightings", () => {
  it("round-trip as pairs, names an object would lose included", () => {
    const sightings = new Map([
      ["__proto__", 1],
      ["constructor", 2],
      ["search", 3]
    ])
    const parsed = parseToolSightings(stringifyToolSightings(sightings))
    expect(Either.getOrThrow(parsed)).toEqual(sightings)
  })

  it("a tool listed twice keeps its earliest time", () => {
    expect(Either.getOrThrow(parseToolSightings('[["a", 5], ["a", 3], ["a", 4]]'))).toEqual(new Map([["a", 3]]))
  })

  it("refuse what is not the format: not JSON, an object, a negative time, too long a name, too many tools", () => {
    const tooMany = JSON.stringify(many("t", MAX_TOOLS_PER_AGENT + 1).map(({ name }) => [name, 1]))
    for (const json of [
      "not json",
      '{"a": 1}',
      '[["a", -1]]',
      '[["a", 1.5]]',
      '[["", 1]]',
      JSON.stringify([["x".repeat(MAX_TOOL_NAME_CHARS + 1), 1]]),
      tooMany
    ]) {
      expect(Either.isLeft(parseToolSightings(json)), json.slice(0, 40)).toBe(true)
    }
  })

  it("merge keeps the earlier time of a tool, adds new ones while there is room, and says when nothing changed", () => {
    const stored = new Map([["a", 100]])
    expect(mergeToolSightings(stored, new Map([["a", 200]]))).toEqual({ merged: stored, changed: false })
    expect(mergeToolSightings(stored, new Map([["a", 50]])).merged).toEqual(new Map([["a", 50]]))
    expect(mergeToolSightings(stored, new Map([["b", 300]]))).toEqual({
      merged: new Map([
        ["a", 100],
        ["b", 300]
      ]),
      changed: true
    })
    const full = new Map(many("t", MAX_TOOLS_PER_AGENT).map(({ name }) => [name, 1]))
    expect(mergeToolSightings(full, new Map([["new", 2]]))).toEqual({ merged: full, changed: false })
  })
})

describe("AgentState.layerMemory tool sightings", () => {
  it.effect("are kept per agent and bounded", () =>
    Effect.gen(function* () {
      const state = yield* AgentState
      state.noteTools("agt-a", named("search"), 1_000)
      state.noteTools("agt-a", named("search"), 2_000)
      expect(state.toolsFirstSeen("agt-a")("search")).toEqual(new Date(1_000))
      expect(state.toolsFirstSeen("agt-b")("search")).toBeUndefined()
      state.noteTools("agt-a", many("t", MAX_TOOLS_PER_AGENT), 3_000)
      expect(state.toolsFirstSeen("agt-a")("t-late")).toBe(LONG_AGO)
      expect(state.toolsFirstSeen("agt-b")("t-late")).toBeUndefined()
    }).pipe(Effect.provide(AgentState.layerMemory))
  )
})
