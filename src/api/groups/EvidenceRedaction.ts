/**
 * An organization's evidence redaction (docs/security.md, "Evidence redaction"): what a judge's text
 * keeps of its agents' reasoning. Owner and Admin set it; every member reads it. The deployment's
 * CANDOR_EVIDENCE_REDACTION still applies when it is stricter.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { EvidenceRedactionUpdate, OrgEvidenceRedaction } from "../../../core/schema/EvidenceRedaction.js"
import { Identifier } from "../../../core/schema/Ids.js"
import { EvidenceRedactionNotFound } from "../../../services/EvidenceRedaction.js"

const OrgPath = Schema.Struct({ org_id: Identifier })

const PATH = "/orgs/:org_id/evidence-redaction"

export class EvidenceRedactionApi extends HttpApiGroup.make("evidenceRedaction")
  .add(HttpApiEndpoint.get("getEvidenceRedaction", PATH).setPath(OrgPath).addSuccess(OrgEvidenceRedaction))
  .add(
    HttpApiEndpoint.put("setEvidenceRedaction", PATH)
      .setPath(OrgPath)
      .setPayload(EvidenceRedactionUpdate)
      .addSuccess(OrgEvidenceRedaction)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  .addError(EvidenceRedactionNotFound)
  .middleware(Authentication) {}
