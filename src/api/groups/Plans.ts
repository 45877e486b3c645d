/** GET /v1/plans (docs/api.md; the Plan fields in core/schema/Plan.ts): Free, Developer, Team, Enterprise. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { PlanList } from "../../../core/schema/Plan.js"

export class PlansApi extends HttpApiGroup.make("plans")
  .add(HttpApiEndpoint.get("listPlans", "/plans").addSuccess(PlanList))
  .addError(InternalError)
  .middleware(Authentication) {}
