/**
 * License validation: the token's signature against the deployment's key ring (a license issued
 * before a key rotation stays valid until it expires), its expiry, its plan (whose flags and limits
 * the license's own override), and a record of the checking instance.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SigningKeys } from "../../../adapters/keys/SigningKeys.js"
import * as KeyRepo from "../../../adapters/store/KeyRepo.js"
import { checkLicense } from "../../../adapters/licensing/LicenseToken.js"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

/** A valid license is checked again daily; an invalid one hourly. */
const DAY = 86_400
const HOUR = 3_600
/** Expiring within this many days adds a warning. */
const WARN_DAYS = 30

const invalid = (warning: string) => ({
  valid: false,
  license_id: null,
  plan_id: null,
  feature_flags: {},
  limits: {},
  expires_at: null,
  next_check_seconds: HOUR,
  warning
})

export const LicenseLive = HttpApiBuilder.group(CandorApi, "license", (handlers) =>
  handlers.handle("validateLicense", ({ payload }) =>
    Effect.gen(function* () {
      const { active } = yield* SigningKeys
      const ring = new Map((yield* (yield* KeyRepo.KeyRepo).list).map((key) => [key.key_id, key.public_key]))
      ring.set(active.keyId, active.publicKey)
      const check = checkLicense(payload.license, (keyId) => ring.get(keyId))
      if (check._tag === "Malformed") return invalid("license is not a Candor license token")
      if (check._tag === "BadSignature") return invalid("license signature is not valid for this deployment")
      const { license } = check
      const catalog = yield* CatalogRepo
      const plan = yield* catalog.plan(license.plan_id)
      const base = {
        license_id: license.license_id,
        plan_id: license.plan_id,
        feature_flags: { ...plan?.feature_flags, ...license.feature_flags },
        limits: { ...plan?.limits, ...license.limits },
        expires_at: new Date(license.expires_at).toISOString()
      }
      if (plan === undefined) {
        return { ...base, valid: false, next_check_seconds: HOUR, warning: `plan ${license.plan_id} does not exist` }
      }
      const remainingMs = Date.parse(license.expires_at) - Date.now()
      if (remainingMs <= 0) {
        return { ...base, valid: false, next_check_seconds: HOUR, warning: `license expired on ${base.expires_at}` }
      }
      yield* catalog.recordActivation(license.license_id, payload.instance_id, payload.instance_metadata)
      const days = Math.floor(remainingMs / (DAY * 1000))
      return {
        ...base,
        valid: true,
        next_check_seconds: Math.min(DAY, Math.max(60, Math.floor(remainingMs / 1000))),
        warning: days < WARN_DAYS ? `license expires in ${days} day${days === 1 ? "" : "s"}` : ""
      }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
).pipe(Layer.provide(KeyRepo.layer))
