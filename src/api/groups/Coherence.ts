/**
 * Fleet coherence of an organization (docs/coherence.md): how well the declared values of its
 * agents' active Alignment Cards fit together. Every member reads (as the organization itself); read-only.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { OrgCoherence } from "../../../core/schema/Coherence.js"
import { Identifier } from "../../../core/schema/Ids.js"

const OrgPath = Schema.Struct({ org_id: Identifier })

export class CoherenceApi extends HttpApiGroup.make("coherence")
  .add(HttpApiEndpoint.get("getOrgCoherence", "/orgs/:org_id/coherence").setPath(OrgPath).addSuccess(OrgCoherence))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
