/**
 * License validation: the token's signature against the deployment's key ring (a license issued
 * before a key rotation stays valid until it expires), its expiry, its plan (whose flags and limits
 * the license's own override), and a record of the checking instance. The answer also says when to
 * check again: daily when valid, hourly when not.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import { checkLicense } from "../adapters/licensing/LicenseToken.js"
import { CatalogRepo } from "../adapters/store/identity/CatalogRepo.js"
import { KeyRepo } from "../adapters/store/KeyRepo.js"

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

/** The instance asking, as it names and describes itself. */
export interface LicenseCheck {
  readonly license: string
  readonly instance_id: string
  readonly instance_metadata?: unknown
}

export const make = Effect.gen(function* () {
  const signingKeys = yield* SigningKeys
  const keys = yield* KeyRepo
  const catalog = yield* CatalogRepo

  const validate = (check: LicenseCheck) =>
    Effect.gen(function* () {
      const { active } = signingKeys
      const ring = new Map((yield* keys.list).map((key) => [key.key_id, key.public_key]))
      ring.set(active.keyId, active.publicKey)
      const token = checkLicense(check.license, (keyId) => ring.get(keyId))
      if (token._tag === "Malformed") return invalid("license is not a Candor license token")
      if (token._tag === "BadSignature") return invalid("license signature is not valid for this deployment")
      const { license } = token
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
      yield* catalog.recordActivation(license.license_id, check.instance_id, check.instance_metadata)
      const days = Math.floor(remainingMs / (DAY * 1000))
      return {
        ...base,
        valid: true,
        next_check_seconds: Math.min(DAY, Math.max(60, Math.floor(remainingMs / 1000))),
        warning: days < WARN_DAYS ? `license expires in ${days} day${days === 1 ? "" : "s"}` : ""
      }
    })

  return { validate }
})

export class Licenses extends Context.Tag("candor/services/Licenses")<Licenses, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Licenses, make)
