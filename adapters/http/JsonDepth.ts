/**
 * How deeply a JSON text nests, found in one pass over its characters without parsing it.
 *
 * `JSON.parse` takes any depth, but what reads the value afterwards (schema decoding, its error
 * formatter, canonicalisation) recurses once per level, so a body of a few thousand `[` overflows
 * the stack there: a 500 for any caller who sends one (found by test/api/Bodies.fuzz.test.ts).
 * Refusing such a body before it is parsed costs a linear scan and keeps every reader safe.
 */

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The deepest nesting of objects and arrays in `text` (brackets inside strings do not count). */
export const jsonDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > deepest) deepest = depth
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return deepest
}

/** Deepest nesting the API accepts in a request body: far beyond any document of its own (cards nest about 5 levels). */
export const MAX_JSON_DEPTH = 64
