/**
 * Dead letters (docs/api.md, "Dead letters"; issue 24): the gateway events the pipeline gave up on,
 * newest recorded first, a bounded page at a time, never their payload. Every dead letter to the
 * service-role key; to an organization's Owners, those naming the organization's agents.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { DeadLetterPage } from "../../../core/schema/DeadLetter.js"
import { Identifier } from "../../../core/schema/Ids.js"
import { IntParam } from "./Checkpoints.js"

export const DEAD_LETTER_LIMIT = { min: 1, max: 100, default: 50 } as const

export const DeadLetterParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(DEAD_LETTER_LIMIT.min, DEAD_LETTER_LIMIT.max), {
    default: () => DEAD_LETTER_LIMIT.default,
    exact: true
  }),
  before: Schema.optionalWith(
    Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,17}$/, { message: () => "must be a page's next_before" })),
    { exact: true }
  )
})

export class DeadLettersApi extends HttpApiGroup.make("deadLetters")
  .add(
    HttpApiEndpoint.get("adminDeadLetters", "/admin/dead-letters")
      .setUrlParams(DeadLetterParams)
      .addSuccess(DeadLetterPage)
  )
  .add(
    HttpApiEndpoint.get("orgDeadLetters", "/orgs/:org_id/dead-letters")
      .setPath(Schema.Struct({ org_id: Identifier }))
      .setUrlParams(DeadLetterParams)
      .addSuccess(DeadLetterPage)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
