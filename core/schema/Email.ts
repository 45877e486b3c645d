/**
 * An email address as the API accepts it (organization invites, billing details, the enterprise contact form).
 */
import * as Schema from "effect/Schema"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const Email = Schema.String.pipe(
  Schema.maxLength(254, { message: () => "must be an email address" }),
  Schema.pattern(EMAIL, { message: () => "must be an email address" })
).annotations({ identifier: "Email", description: "An email address", jsonSchema: { format: "email" } })
