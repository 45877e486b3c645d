/**
 * POST /v1/license/validate end to end, with licenses issued as `candor license issue` does
 * (Ed25519 with the deployment's signing key): valid, expiring soon, expired, forged, signed by
 * another key, not a license, an unknown plan; signed by a key rotated out since; and the instance
 * recorded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it as plain, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as KeyRepo from "../../adapters/store/KeyRepo.js"
import { checkLicense, issueLicense, type License } from "../../adapters/licensing/LicenseToken.js"
import { generateSigningKey } from "../../core/Signing.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const DAY = 86_400_000
const license = (days: number, overrides: Partial<License> = {}): Omit<License, "key_id"> => ({
  license_id: `lic-${days}-${Math.random().toString(36).slice(2, 8)}`,
  plan_id: "enterprise",
  licensee: "Acme",
  feature_flags: { sso: false, custom: true },
  limits: { requests_per_second: 500 },
  issued_at: new Date().toISOString(),
  expires_at: new Date(Date.now() + days * DAY).toISOString(),
  ...overrides
})

const FIELDS = [
  "expires_at",
  "feature_flags",
  "license_id",
  "limits",
  "next_check_seconds",
  "plan_id",
  "valid",
  "warning"
]

layer(Harness.layer(), { timeout: "60 seconds" })("license", (it) => {
  const validate = (token: string, instance = "instance-1") =>
    Effect.flatMap(ApiHarness, (api) =>
      api.call("POST", "/v1/license/validate", {
        token: api.fixtures.userA.token,
        body: { license: token, instance_id: instance, instance_metadata: { version: "0.1.0", host: "h1" } }
      })
    )

  it.effect("a valid license: the spec's fields, the plan's flags and limits overridden by the license's", () =>
    Effect.gen(function* () {
      const { active } = yield* SigningKeys
      const issued = license(365)
      const res = yield* validate(issueLicense(active, issued))
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toStrictEqual(FIELDS)
      expect(res.body).toMatchObject({
        valid: true,
        license_id: issued.license_id,
        plan_id: "enterprise",
        expires_at: issued.expires_at,
        next_check_seconds: 86_400,
        warning: ""
      })
      expect(res.body.feature_flags).toMatchObject({ sso: false, custom: true, webhooks: true })
      expect(res.body.limits.requests_per_second).toBe(500)
      const sql = yield* SqlClient.SqlClient
      const rows =
        yield* sql`select instance_id, instance_metadata from license_activations where license_id = ${issued.license_id}`
      expect(rows).toStrictEqual([{ instance_id: "instance-1", instance_metadata: { version: "0.1.0", host: "h1" } }])
    })
  )

  it.effect("expiring within 30 days warns; expired is invalid with the reason", () =>
    Effect.gen(function* () {
      const { active } = yield* SigningKeys
      const soon = yield* validate(issueLicense(active, license(5)))
      expect(soon.body.valid).toBe(true)
      expect(soon.body.warning).toMatch(/^license expires in [45] days$/)
      const expired = yield* validate(issueLicense(active, license(-1)))
      expect(expired.body).toMatchObject({ valid: false, plan_id: "enterprise" })
      expect(expired.body.warning).toMatch(/^license expired on /)
    })
  )

  it.effect("forged, foreign-key, malformed and unknown-plan licenses are invalid (200, valid: false)", () =>
    Effect.gen(function* () {
      const { active } = yield* SigningKeys
      const good = issueLicense(active, license(30))
      const [prefix, payload, signature] = good.split(".")
      const tampered = JSON.parse(Buffer.from(payload!, "base64url").toString())
      tampered.plan_id = "free"
      const forged = `${prefix}.${Buffer.from(JSON.stringify(tampered)).toString("base64url")}.${signature}`
      const foreign = issueLicense(generateSigningKey(), license(30))
      const cases: ReadonlyArray<[string, string]> = [
        [forged, "license signature is not valid for this deployment"],
        [foreign, "license signature is not valid for this deployment"],
        ["not-a-license", "license is not a Candor license token"]
      ]
      for (const [token, warning] of cases) {
        const res = yield* validate(token)
        expect(res.status).toBe(200)
        expect(res.body).toStrictEqual({
          valid: false,
          license_id: null,
          plan_id: null,
          feature_flags: {},
          limits: {},
          expires_at: null,
          next_check_seconds: 3600,
          warning
        })
      }
      const unknownPlan = yield* validate(issueLicense(active, license(30, { plan_id: "platinum" })))
      expect(unknownPlan.body).toMatchObject({ valid: false, warning: "plan platinum does not exist" })
      const missing = yield* Effect.flatMap(ApiHarness, (api) =>
        api.call("POST", "/v1/license/validate", { token: api.fixtures.userA.token, body: { license: good } })
      )
      expect(missing.status).toBe(400)
      expect(missing.body.error).toMatch(/^instance_id/)
    })
  )

  it.effect("a license signed before a key rotation stays valid: any key of the ring verifies it", () =>
    Effect.gen(function* () {
      const previous = generateSigningKey()
      const issued = license(90)
      const token = issueLicense(previous, issued)
      expect((yield* validate(token)).body.valid).toBe(false)
      yield* Effect.flatMap(KeyRepo.KeyRepo, (repo) => repo.registerRetired(previous.publicKey)).pipe(
        Effect.provide(KeyRepo.layer)
      )
      expect((yield* validate(token)).body).toMatchObject({ valid: true, license_id: issued.license_id })
    })
  )
})

plain("checkLicense never throws on garbage", () => {
  const key = generateSigningKey()
  for (const token of [
    "",
    "cndl1",
    "cndl1..",
    "cndl1.%%%.@@@",
    `cndl1.${Buffer.from("[]").toString("base64url")}.AA`
  ]) {
    expect(checkLicense(token, () => key.publicKey)._tag).toBe("Malformed")
  }
})
