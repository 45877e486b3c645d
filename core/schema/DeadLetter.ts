/**
 * Dead letters (issue 24): a gateway event the pipeline gave up on (its worker could not decode it,
 * or the bus delivered it the most times it may) is an alarm, never silence. Each one is recorded
 * with what names it (subject, agent, why, when) and never its payload: the payload is what could
 * not be trusted, and may carry whatever a caller put in a header. The same shape is the entry of
 * `GET /v1/admin/dead-letters` and `GET /v1/orgs/{org_id}/dead-letters` and the data of the
 * `pipeline.dead_lettered` event.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString } from "./Ids.js"

export const DeadLetter = Schema.Struct({
  dead_letter_id: Schema.String.pipe(Schema.startsWith("dl-")).annotations({
    description: "The same in the routes and in the event: receivers deduplicate on it"
  }),
  subject: Schema.String.annotations({
    description: "The bus subject the event was published on: `<prefix>.events.<partition>.<agent_id>`"
  }),
  agent_id: Schema.NullOr(AgentId).annotations({ description: "The agent the subject names; null when it names none" }),
  reason: Schema.String.annotations({
    description:
      "Why it was given up: `not a gateway event: <fields>` (the fields that did not decode, never their values), `delivered <n> times`, `not JSON`, `not a batch`"
  }),
  deliveries: Schema.NonNegativeInt.annotations({ description: "Deliveries to a worker before it was given up" }),
  dead_lettered_at: DateTimeString
}).annotations({ identifier: "DeadLetter", description: "One event the pipeline gave up on: never its payload" })
export type DeadLetter = typeof DeadLetter.Type

export const DeadLetterPage = Schema.Struct({
  dead_letters: Schema.Array(DeadLetter).annotations({ description: "Newest recorded first" }),
  next_before: Schema.NullOr(Schema.String).annotations({
    description: "Pass as `before` for the next page; null on the last page"
  })
}).annotations({ identifier: "DeadLetterPage" })
export type DeadLetterPage = typeof DeadLetterPage.Type
