/**
 * Whether a JSON text has an object with the same member name twice (RFC 8259 §4: names SHOULD be
 * unique, and parsers disagree on which one wins). The proxy reads a `tools/call` with `JSON.parse`,
 * where the last one wins; a server whose parser keeps the first would run another tool, or other
 * arguments, than the ones the policy allowed. Such a call is refused instead (docs/mcp.md).
 *
 * For a text `JSON.parse` has already accepted: one pass, linear in its length; names compared
 * after their escapes are decoded (`"a"` and `"\u0061"` are the same name).
 */
export const hasDuplicateMembers = (text: string): boolean => {
  /** One entry per open container: the names seen so far for an object, undefined for an array. */
  const open: Array<Set<string> | undefined> = []
  let expectName = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 123 /* { */) {
      open.push(new Set())
      expectName = true
    } else if (c === 91 /* [ */) {
      open.push(undefined)
      expectName = false
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      open.pop()
      expectName = false
    } else if (c === 44 /* , */) {
      expectName = open[open.length - 1] !== undefined
    } else if (c === 58 /* : */) {
      expectName = false
    } else if (c === 34 /* " */) {
      const start = i
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 92 /* \ */) i++
        else if (d === 34) break
      }
      if (expectName) {
        const names = open[open.length - 1]!
        const raw = text.slice(start, i + 1)
        const name = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1)
        if (names.has(name)) return true
        names.add(name)
        expectName = false
      }
    }
  }
  return false
}
