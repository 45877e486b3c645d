/**
 * An agent's display name (PATCH /v1/agents/{agent_id}): text people give an agent so the console
 * can show something better than its hash-derived id. Trimmed, then 1 to 100 characters (UTF-16
 * code units, as every other length of the API), without control characters, line or paragraph
 * separators, bidirectional overrides or lone surrogates: a name is shown beside the organization's
 * name, and an override could make it read as another agent's (or the organization's) text.
 *
 * A name is never published: the public routes (reputation, badges, verification) answer the id only.
 */
import * as Schema from "effect/Schema"

export const AGENT_DISPLAY_NAME_MAX = 100

const RULE = `must be 1 to ${AGENT_DISPLAY_NAME_MAX} characters, without control characters`

/** Cc (C0, DEL, C1), Zl and Zp (U+2028, U+2029), Cs (a lone surrogate), bidirectional embeddings, overrides and isolates. */
const REFUSED = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u202a-\u202e\u2066-\u2069]/u

export const AgentDisplayName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => RULE }),
  Schema.maxLength(AGENT_DISPLAY_NAME_MAX, { message: () => RULE }),
  Schema.filter((name) => !REFUSED.test(name) || RULE)
).annotations({
  identifier: "AgentDisplayName",
  description: `1 to ${AGENT_DISPLAY_NAME_MAX} characters (trimmed), no control characters`
})
