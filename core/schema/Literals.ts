/**
 * String enums whose decode error is one line ("must be one of …") instead of one line per
 * member: the API rewrites decode errors into its 400 body, and eight "Expected …" lines bury the
 * field name.
 */
import { Schema } from "effect"

/** The offending value, short and never throwing (JSON.stringify throws on bigint and cycles). */
const describeActual = (actual: unknown): string => {
  if (typeof actual === "string") return JSON.stringify(actual.length > 64 ? `${actual.slice(0, 64)}…` : actual)
  if (actual === null || typeof actual === "number" || typeof actual === "boolean") return String(actual)
  return Array.isArray(actual) ? "an array" : `a value of type ${typeof actual}`
}

export const literalUnion = <const L extends readonly [string, ...Array<string>]>(
  values: L,
  annotations: Schema.Annotations.Schema<L[number]> = {}
): Schema.Literal<[...L]> =>
  Schema.Literal(...values).annotations({
    // override: without it a union's own message is ignored in favour of its members' messages
    message: (issue) => ({
      message: `must be one of ${values.join(", ")}; got ${describeActual(issue.actual)}`,
      override: true
    }),
    ...annotations
  })
