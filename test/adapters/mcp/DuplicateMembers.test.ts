/**
 * Duplicate member names (adapters/mcp/DuplicateMembers.ts): found at any depth, after escapes are
 * decoded, and never in strings, arrays or distinct objects.
 */
import { describe, expect, it } from "vitest"
import { hasDuplicateMembers } from "../../../adapters/mcp/DuplicateMembers.js"

describe("hasDuplicateMembers", () => {
  it("finds a name twice in one object, at any depth, escaped or not", () => {
    expect(hasDuplicateMembers('{"method":"ping","method":"tools/call"}')).toBe(true)
    expect(hasDuplicateMembers('{"params":{"arguments":{"path":"/etc","path":"/tmp/a"}}}')).toBe(true)
    expect(hasDuplicateMembers('{"name":"a","\\u006eame":"b"}')).toBe(true)
    expect(hasDuplicateMembers('[{"a":1},{"b":{"c":[1,{"d":1,"d":2}]}}]')).toBe(true)
  })

  it("passes the same name in sibling objects, names inside strings, and escaped quotes", () => {
    expect(hasDuplicateMembers('{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}')).toBe(false)
    expect(hasDuplicateMembers('{"a":"\\"a\\":1,\\"a\\":2","b":"{\\"a\\":1}"}')).toBe(false)
    expect(hasDuplicateMembers('{"a":["a","a"],"b":"a"}')).toBe(false)
    expect(hasDuplicateMembers(" { } ")).toBe(false)
  })
})
