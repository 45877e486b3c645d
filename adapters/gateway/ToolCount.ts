/**
 * How many tools a request declares, counted the way the tool caps count them (adapters/gateway/
 * ToolCaps.ts): the entries of the lists the provider adapters read tools from. Anthropic: `tools[]`;
 * OpenAI: `tools[]` and the legacy `functions[]`; Gemini: in each `tools[]` object, the entries of
 * `functionDeclarations` (and `function_declarations`) and each other member (a built-in tool).
 *
 * Twice: on the parsed body (`toolEntriesOf`, exact), and on the raw bytes before anything is parsed
 * (`toolEntriesOver`). The second is why this module exists: `JSON.parse` of a 2 MB body declaring
 * 20,000 tools takes tens of milliseconds of the gateway's one thread (docs/benchmarks.md), and the
 * answer to such a request is a 413 that needs only the count. The scan walks the top-level object
 * skipping every value it does not count (strings by `indexOf` to the next quote, everything else
 * byte by byte, nothing built) and stops as soon as a list has more entries than the cap, or once it
 * has counted every list the provider reads. It reads keys as `JSON.parse` does (escapes decoded)
 * and gives up (`undefined`) on anything that is not plainly a JSON object, leaving the decision to
 * the parse and the exact count that follow. A list past the cap is refused even if a later
 * duplicate member would replace it: parsers disagree on which duplicate wins, and the provider's
 * may keep the first.
 */
import { arrayAt, isRecord } from "../providers/Extraction.js"
import type { ProviderName } from "../providers/Provider.js"

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const DECLARATIONS = ["functionDeclarations", "function_declarations"]

/** The lists each provider reads tools from, at the top of the body. */
const LISTS: Readonly<Record<ProviderName, ReadonlyArray<string>>> = {
  anthropic: ["tools"],
  openai: ["tools", "functions"],
  gemini: ["tools"]
}

/** Entries of the tool lists of a parsed body. */
export const toolEntriesOf = (provider: ProviderName, body: unknown): number => {
  if (provider !== "gemini") return LISTS[provider].reduce((sum, key) => sum + arrayAt(body, key).length, 0)
  let count = 0
  for (const tool of arrayAt(body, "tools")) {
    if (!isRecord(tool)) continue
    for (const key of Object.keys(tool)) count += DECLARATIONS.includes(key) ? arrayAt(tool, key).length : 1
  }
  return count
}

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09

/** Thrown inside the scan for anything it does not read as plain JSON; never escapes `toolEntriesOver`. */
class Unreadable extends Error {}
const unreadable = new Unreadable()

class Scan {
  i = 0
  constructor(private readonly b: Buffer) {}

  space(): void {
    while (this.i < this.b.length && isSpace(this.b[this.i]!)) this.i++
  }

  /** The next byte after white space, consumed when it is `expected`. */
  take(expected: number): boolean {
    this.space()
    if (this.b[this.i] !== expected) return false
    this.i++
    return true
  }

  expect(expected: number): void {
    if (!this.take(expected)) throw unreadable
  }

  /** The index after the string that opens at `start` (an even run of backslashes before a quote escapes nothing). */
  endOfString(start: number): number {
    const b = this.b
    // Short strings (names, keys) end sooner than a native call returns: a loop first.
    let from = start + 1
    const near = Math.min(b.length, from + 32)
    while (from < near) {
      const c = b[from]!
      if (c === QUOTE) return from + 1
      from += c === BACKSLASH ? 2 : 1
    }
    for (;;) {
      const quote = b.indexOf(QUOTE, from)
      if (quote < 0) throw unreadable
      let k = quote - 1
      while (k > start && b[k] === BACKSLASH) k--
      if ((quote - 1 - k) % 2 === 0) return quote + 1
      from = quote + 1
    }
  }

  /** A member name, decoded as JSON.parse decodes it. */
  key(): string {
    this.space()
    if (this.b[this.i] !== QUOTE) throw unreadable
    const start = this.i
    this.i = this.endOfString(start)
    const raw = this.b.toString("utf8", start + 1, this.i - 1)
    if (!raw.includes("\\")) return raw
    try {
      return JSON.parse(this.b.toString("utf8", start, this.i)) as string
    } catch {
      throw unreadable
    }
  }

  /** Skips one value of any kind. */
  value(): void {
    this.space()
    const b = this.b
    const first = b[this.i]
    if (first === undefined) throw unreadable
    if (first === QUOTE) return void (this.i = this.endOfString(this.i))
    if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
      // A number, true, false or null: up to the next delimiter.
      const start = this.i
      while (this.i < b.length) {
        const c = b[this.i]!
        if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break
        this.i++
      }
      if (this.i === start) throw unreadable
      return
    }
    let depth = 0
    let j = this.i
    while (j < b.length) {
      const c = b[j]!
      if (c === QUOTE) {
        j = this.endOfString(j)
        continue
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
      else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return void (this.i = j + 1)
      j++
    }
    throw unreadable
  }

  /** The members of the object that opens here, each handed to `member` positioned at its value. */
  members(member: (key: string) => void): void {
    this.expect(OPEN_OBJECT)
    if (this.take(CLOSE_OBJECT)) return
    do {
      const key = this.key()
      this.expect(COLON)
      member(key)
    } while (this.take(COMMA))
    this.expect(CLOSE_OBJECT)
  }

  /** The entries of the array that opens here (`undefined` when the value is not an array: skipped), each handed to `entry`. */
  entries(entry: () => void = () => this.value()): number | undefined {
    this.space()
    if (this.b[this.i] !== OPEN_ARRAY) {
      this.value()
      return undefined
    }
    this.i++
    if (this.take(CLOSE_ARRAY)) return 0
    let count = 0
    do {
      entry()
      count++
    } while (this.take(COMMA))
    this.expect(CLOSE_ARRAY)
    return count
  }

  /** One Gemini tool: each of its declarations and other members (a repeated one counted again) handed to `add`. */
  geminiTool(add: () => void): void {
    this.space()
    if (this.b[this.i] !== OPEN_OBJECT) return this.value()
    this.members((key) => {
      if (!DECLARATIONS.includes(key)) {
        this.value()
        return add()
      }
      this.entries(() => {
        this.value()
        add()
      })
    })
  }
}

/** Ends the scan early: a list past the cap, or every list counted. */
class Stop extends Error {
  constructor(readonly over: number | "within") {
    super()
  }
}

/**
 * The entries of the tool lists when they are more than `cap` (counted from the bytes alone, as far
 * as needed to know); `"within"` when every list the provider reads was counted and none is; and
 * `undefined` when the bytes do not tell (not plainly one JSON object: a byte-order mark, an encoding,
 * a syntax error, or only the first part of a body), leaving the decision to the parse.
 */
export const toolEntriesOver = (
  provider: ProviderName,
  body: Uint8Array,
  cap: number
): number | "within" | undefined => {
  const scan = new Scan(Buffer.from(body.buffer, body.byteOffset, body.byteLength))
  const lists = LISTS[provider]
  const counts = new Map<string, number>()
  const others = (key: string) => {
    let sum = 0
    for (const [list, n] of counts) if (list !== key) sum += n
    return sum
  }
  try {
    scan.members((key) => {
      if (!lists.includes(key)) return scan.value()
      const before = others(key)
      let count = 0
      const add = () => {
        if (before + ++count > cap) throw new Stop(before + count)
      }
      scan.entries(() => (provider === "gemini" ? scan.geminiTool(add) : (scan.value(), add())))
      counts.set(key, count)
      if (counts.size === lists.length) throw new Stop("within")
    })
  } catch (error) {
    if (error instanceof Stop) return error.over
    if (error instanceof Unreadable) return undefined
    throw error
  }
  // The whole object read, and some list it could hold absent: none is over.
  return "within"
}
