/**
 * `candor serve` runs with the V8 flags of src/NodeFlags.ts however a user starts it: the bin's
 * shebang (`npx candor`, the bin run directly) and `npm start` carry each of them, and the embedded
 * default's backend thread gets the same young generation as a resource limit.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { BACKEND_YOUNG_GENERATION_MB, SERVE_NODE_FLAGS } from "../../src/NodeFlags.js"

const root = new URL("../../", import.meta.url)
const read = (path: string) => readFileSync(new URL(path, root), "utf8")

/** The value of `--<name>=<n>` among the flags, if one sets it. */
const flagValue = (name: string): string | undefined =>
  SERVE_NODE_FLAGS.map((flag) => new RegExp(`^--${name}=(\\d+)$`).exec(flag)?.[1]).find((value) => value !== undefined)

describe("the Node flags of candor serve", () => {
  it("the bin's shebang passes each flag to node", () => {
    const shebang = read("bin/candor.js").split("\n")[0]!
    expect(shebang.startsWith("#!/usr/bin/env -S node ")).toBe(true)
    for (const flag of SERVE_NODE_FLAGS) expect(shebang.split(" ")).toContain(flag)
  })

  it("npm start passes each flag to node, before the bin", () => {
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts["start"]!
    const words = start.split(" ")
    expect(words[0]).toBe("node")
    const bin = words.indexOf("bin/candor.js")
    for (const flag of SERVE_NODE_FLAGS) {
      expect(words).toContain(flag)
      expect(words.indexOf(flag)).toBeLessThan(bin)
    }
  })

  it("the semi-spaces start at their largest size, so the nursery never grows in steps later", () => {
    expect(flagValue("max-semi-space-size")).toBeDefined()
    expect(flagValue("min-semi-space-size")).toBe(flagValue("max-semi-space-size"))
  })

  it("the backend thread's young generation is three semi-spaces of the flag's size", () => {
    expect(BACKEND_YOUNG_GENERATION_MB).toBe(3 * Number(flagValue("max-semi-space-size")))
  })
})
