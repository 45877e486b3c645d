/**
 * The compiled glob matcher (core/GlobSet.ts): it agrees with the reference glob semantics (`*` any
 * run, `?` one UTF-16 code unit, the rest literal, the whole name) on random globs and names, a
 * match cut into budgets gives the same answer, and its work, counted in steps (never timed), is
 * linear in the name and in the globs on the inputs that make backtracking matchers quadratic or
 * worse. Property runs use a fixed seed and a bounded number of runs.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { GlobSet } from "../../core/GlobSet.js"
import { fuzzParameters } from "../support/Fuzz.js"

/** The reference: the glob as an anchored regular expression over code units (no `u` flag), `.` matching newlines too. */
const reference = (glob: string, name: string): boolean =>
  new RegExp(
    `^${[...glob].map((c) => (c === "*" ? "[\\s\\S]*" : c === "?" ? "[\\s\\S]" : c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"))).join("")}$`
  ).test(name)

const expected = (globs: ReadonlyArray<string>, name: string) =>
  globs.flatMap((glob, id) => (reference(glob, name) ? [id] : []))

/** Few letters, so that globs and names meet often; a regex metacharacter, a non-ASCII letter and half a surrogate pair too. */
const letter = fc.constantFrom("a", "b", "c", ".", "é", "\ud83d")
const globOf = fc
  .array(fc.oneof(letter, fc.constantFrom("*", "?")), { minLength: 1, maxLength: 12 })
  .map((cs) => cs.join(""))
const nameOf = (maxLength: number) => fc.array(letter, { maxLength }).map((cs) => cs.join(""))

/** The worst a name may cost (core/GlobSet.ts, "A name costs at most"), with every glob a candidate. */
const bound = (globs: ReadonlyArray<string>, name: string): number => {
  const words = (name.length >>> 5) + 1
  const perGlob = globs.reduce((sum, glob) => sum + 1 + glob.length * (words + 1), 0)
  const characters = new Set(globs.join("").replace(/[*?]/g, "")).size
  return 96 + 3 * (name.length + 1) + 2 * globs.length + name.length * characters + perGlob
}

const stepsOf = (set: GlobSet, name: string): number => {
  const cursor = set.start(name)
  cursor.run(Number.POSITIVE_INFINITY)
  return cursor.steps
}

describe("GlobSet", () => {
  it("matches what the reference semantics match, for every glob of a set", () => {
    fc.assert(
      fc.property(fc.array(globOf, { minLength: 1, maxLength: 8 }), nameOf(12), (globs, name) => {
        expect(new GlobSet(globs).match(name)).toEqual(expected(globs, name))
      }),
      fuzzParameters(1500)
    )
  })

  it("agrees on names longer than one word of positions (33 to 140 code units)", () => {
    fc.assert(
      fc.property(
        fc.array(globOf, { minLength: 1, maxLength: 4 }),
        fc.array(letter, { minLength: 33, maxLength: 140 }).map((cs) => cs.join("")),
        (globs, name) => {
          expect(new GlobSet(globs).match(name)).toEqual(expected(globs, name))
        }
      ),
      fuzzParameters(400)
    )
  })

  it("gives the same answer when the match is run a step at a time", () => {
    fc.assert(
      fc.property(
        fc.array(globOf, { minLength: 1, maxLength: 8 }),
        nameOf(40),
        fc.integer({ min: 1, max: 20 }),
        (globs, name, budget) => {
          const cursor = new GlobSet(globs).start(name)
          let turns = 0
          while (!cursor.run(budget)) turns++
          expect(cursor.ids()).toEqual(expected(globs, name))
          expect(turns).toBeLessThanOrEqual(globs.length)
        }
      ),
      fuzzParameters(500)
    )
  })

  it("gives each of repeated globs its own id, whatever the order they come in", () => {
    const set = new GlobSet(["a*", "*", "a*", "a?c", "a?c", "**", "abc"])
    expect(set.match("abc")).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(set.match("b")).toEqual([1, 5])
  })

  it("stays within its stated bound on random globs and names", () => {
    fc.assert(
      fc.property(fc.array(globOf, { minLength: 1, maxLength: 20 }), nameOf(130), (globs, name) => {
        expect(stepsOf(new GlobSet(globs), name)).toBeLessThanOrEqual(bound(globs, name))
      }),
      fuzzParameters(500)
    )
  })

  describe("work on adversarial inputs (steps, not time)", () => {
    // `*a*a*…*a*b` against `aaa…`: a backtracking matcher retries every split (exponential for a
    // regex engine, O(glob × name) for the greedy one-backtrack-point matcher); `*a?b*c*`-style globs
    // by the thousand are always candidates (no literal anchor).
    const families: ReadonlyArray<readonly [string, (k: number) => ReadonlyArray<string>, (n: number) => string]> = [
      ["*a*a*…*b against a…a", (k) => [`${"*a".repeat(k)}*b`], (n) => "a".repeat(n)],
      ["a?a?…b against a…a", (k) => [`${"a?".repeat(k)}b`], (n) => "a".repeat(n)],
      [
        "k globs like *a?b*c*",
        (k) => Array.from({ length: k }, (_, i) => `*${"abc"[i % 3]}?${"abc"[(i >> 2) % 3]}*${"abc"[(i >> 4) % 3]}*`),
        (n) => "abcacb".repeat(Math.ceil(n / 6)).slice(0, n)
      ],
      [
        "k globs *a*b*a*b… (subsequences)",
        (k) => Array.from({ length: k }, () => `*${"a*b*".repeat(16)}c`),
        (n) => "ab".repeat(n / 2)
      ]
    ]

    it.each(families)("%s: twice the name costs at most about twice the steps", (_label, globsOf, nameOfLength) => {
      const set = new GlobSet(globsOf(32))
      for (const n of [128, 256, 512]) {
        const once = stepsOf(set, nameOfLength(n))
        const twice = stepsOf(set, nameOfLength(2 * n))
        expect(twice).toBeLessThanOrEqual(2.2 * once + 64)
      }
    })

    it.each(families)("%s: twice the globs cost at most about twice the steps", (_label, globsOf, nameOfLength) => {
      const name = nameOfLength(128)
      for (const k of [16, 64, 256]) {
        const once = stepsOf(new GlobSet(globsOf(k)), name)
        const twice = stepsOf(new GlobSet(globsOf(2 * k)), name)
        expect(twice).toBeLessThanOrEqual(2.2 * once + 64)
      }
    })

    it("costs the worst request at the gateway's caps (512 names of 128) a bounded number of steps per glob", () => {
      // 1,000 unanchored globs, every one a candidate for every name, each name new.
      const letters = "abcdefgh"
      const globs = Array.from(
        { length: 1000 },
        (_, i) => `*${letters[i % 8]}?${letters[(i >> 3) % 8]}*${letters[(i >> 6) % 8]}*`
      )
      const set = new GlobSet(globs)
      let steps = 0
      for (let i = 0; i < 512; i++) {
        const name = Array.from({ length: 128 }, (_, j) => letters[(i * 31 + j * j * 7 + j) % 8]).join("")
        const used = stepsOf(set, name)
        expect(used).toBeLessThanOrEqual(bound(globs, name))
        steps += used
      }
      // About 7 word operations per glob per name here: the figure bench/PolicyMatch.ts turns into time.
      expect(steps / (512 * 1000)).toBeLessThan(40)
    })
  })
})
