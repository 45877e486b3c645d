/**
 * License validation, through the Licenses service (services/Licenses.ts): the token's signature
 * against the deployment's key ring, its expiry, its plan, and a record of the checking instance.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Licenses } from "../../../services/Licenses.js"
import { CandorApi } from "../Api.js"

export const LicenseLive = HttpApiBuilder.group(CandorApi, "license", (handlers) =>
  Effect.map(Licenses, (licenses) => handlers.handle("validateLicense", ({ payload }) => licenses.validate(payload)))
)
