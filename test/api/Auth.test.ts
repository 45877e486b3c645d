/**
 * Authentication end to end: Bearer JWTs (missing, malformed, expired, forged, wrong issuer or
 * audience, JWKS), the service-role key (constant-time, only where allowed), and API keys (created
 * over HTTP, shown once, stored as SHA-256 only, rotated, revoked, scoped with their role).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { exportJWK, generateKeyPair, SignJWT } from "jose"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { AuthConfig } from "../../adapters/auth/AuthConfig.js"
import * as IdentityTokens from "../../adapters/auth/IdentityTokens.js"
import { hashSecret, secretsEqual } from "../../adapters/auth/Secrets.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const now = () => Math.floor(Date.now() / 1000)

/** The verifier as the API builds it, for the given provider settings. */
const verifierWith = (settings: Partial<AuthConfig["Type"]>) =>
  IdentityTokens.IdentityTokens.pipe(
    Effect.provide(
      IdentityTokens.layer({ dataDir: "/nonexistent" }).pipe(
        Layer.provide(
          Layer.succeed(AuthConfig, {
            jwtSecret: Option.none(),
            jwksUrl: Option.none(),
            issuer: Option.none(),
            audience: Option.none(),
            serviceRoleKey: Option.none(),
            ...settings
          })
        ),
        Layer.provide(NodeContext.layer)
      )
    )
  )

layer(Harness.layer(), { timeout: "60 seconds" })("authentication", (it) => {
  describe("Bearer JWT", () => {
    it.effect("a valid token authenticates; the user is created with the token's email", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const sub = `new-${randomUUID()}`
        const token = yield* api.token(sub, { email: `${sub}@example.test` })
        const res = yield* api.call("GET", "/v1/orgs", { token })
        expect(res).toMatchObject({ status: 200, body: { orgs: [] } })
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`select email, plan_id from users where user_id = ${sub}`
        expect(rows).toStrictEqual([{ email: `${sub}@example.test`, plan_id: "free" }])
      })
    )

    it.effect("401 {error} for no credentials, a non-Bearer header, garbage, a forged and an expired token", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const forged = yield* Effect.promise(() =>
          IdentityTokens.mintToken("not-the-secret", { sub: api.fixtures.userA.userId, ttlSeconds: 3600 })
        )
        const expired = yield* api.token(api.fixtures.userA.userId, { issuedAt: now() - 7200, ttlSeconds: 3600 })
        const cases: ReadonlyArray<[Record<string, string>, RegExp]> = [
          [{}, /^missing credentials/],
          [{ authorization: `Basic ${Buffer.from("a:b").toString("base64")}` }, /Bearer/],
          [{ authorization: "Bearer not.a.jwt" }, /^invalid token$/],
          [{ authorization: `Bearer ${forged}` }, /^invalid token$/],
          [{ authorization: `Bearer ${expired}` }, /^token expired$/]
        ]
        for (const [headers, message] of cases) {
          const res = yield* api.call("GET", "/v1/plans", { headers })
          expect(res.status, JSON.stringify(headers)).toBe(401)
          expect(Object.keys(res.body)).toStrictEqual(["error"])
          expect(res.body.error).toMatch(message)
        }
      })
    )
  })

  describe("service-role key", () => {
    it.effect("is accepted where the spec allows it and refused (403) where a user is needed", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const ok = yield* api.call("PUT", `/v1/admin/users/${api.fixtures.userA.userId}`, {
          token: api.serviceRoleKey,
          body: { plan_id: "enterprise" }
        })
        expect(ok).toMatchObject({ status: 200, body: { user_id: api.fixtures.userA.userId, plan_id: "enterprise" } })
        const asUser = yield* api.call("PUT", `/v1/admin/users/${api.fixtures.userA.userId}`, {
          token: api.fixtures.userA.token,
          body: { is_admin: true }
        })
        expect(asUser.status).toBe(403)
        const nearMiss = yield* api.call("GET", "/v1/plans", { token: `${api.serviceRoleKey}x` })
        expect(nearMiss.status).toBe(401)
      })
    )

    it("compares through SHA-256 digests: equal only when equal, any lengths", () => {
      expect(secretsEqual("abc", "abc")).toBe(true)
      expect(secretsEqual("abc", "abd")).toBe(false)
      expect(secretsEqual("abc", "abcd")).toBe(false)
      expect(secretsEqual("", "")).toBe(true)
    })
  })

  describe("API keys", () => {
    it.effect("created over HTTP, shown once, stored only as SHA-256, usable in x-api-key and X-Service-Api-Key", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const created = yield* api.call("POST", "/v1/api-keys", { token: user.token, body: { name: "ci" } })
        expect(created.status).toBe(201)
        const { key, key_id } = created.body
        expect(key).toMatch(/^cnd_[A-Za-z0-9_-]{43}$/)
        expect(created.body).toMatchObject({
          name: "ci",
          user_id: user.userId,
          org_id: null,
          role: null,
          revoked_at: null
        })
        expect(key.startsWith(created.body.prefix)).toBe(true)

        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`select * from api_keys where key_id = ${key_id}`
        expect(JSON.stringify(rows)).not.toContain(key)
        expect((rows[0] as any).key_hash).toBe(hashSecret(key))

        const listed = yield* api.call("GET", "/v1/api-keys", { token: user.token })
        expect(listed.body.keys.map((k: any) => k.key_id)).toStrictEqual([key_id])
        expect(JSON.stringify(listed.body)).not.toContain(key)

        for (const headers of [{ "x-api-key": key }, { "X-Service-Api-Key": key }]) {
          const res = yield* api.call("GET", "/v1/orgs", { headers })
          expect(res.status).toBe(200)
        }
        expect((yield* api.call("GET", "/v1/orgs", { apiKey: `${key}x` })).status).toBe(401)
      })
    )

    it.effect("rotation replaces the secret (the old one stops working); revocation ends the key", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        const created = yield* api.call("POST", "/v1/api-keys", { token: user.token, body: { name: "rotating" } })
        const rotated = yield* api.call("POST", `/v1/api-keys/${created.body.key_id}/rotate`, { token: user.token })
        expect(rotated.status).toBe(200)
        expect(rotated.body.key_id).toBe(created.body.key_id)
        expect(rotated.body.key).not.toBe(created.body.key)
        expect((yield* api.call("GET", "/v1/plans", { apiKey: created.body.key })).status).toBe(401)
        expect((yield* api.call("GET", "/v1/plans", { apiKey: rotated.body.key })).status).toBe(200)

        const other = yield* api.freshUser
        expect((yield* api.call("DELETE", `/v1/api-keys/${created.body.key_id}`, { token: other.token })).status).toBe(
          404
        )
        // A key cannot revoke keys: they are managed with a user token.
        expect(
          (yield* api.call("DELETE", `/v1/api-keys/${created.body.key_id}`, { apiKey: rotated.body.key })).status
        ).toBe(403)
        const revoked = yield* api.call("DELETE", `/v1/api-keys/${created.body.key_id}`, { token: user.token })
        expect(revoked.status).toBe(200)
        expect(revoked.body.revoked_at).not.toBeNull()
        expect((yield* api.call("GET", "/v1/plans", { apiKey: rotated.body.key })).status).toBe(401)
      })
    )

    it.effect("organization keys carry at most the creator's role; members cannot create them", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, member, orgAgent, orgId } = api.fixtures
        const byMember = yield* api.call("POST", "/v1/api-keys", {
          token: member.token,
          body: { name: "m", org_id: orgId }
        })
        expect(byMember.status).toBe(403)
        const tooHigh = yield* api.call("POST", "/v1/api-keys", {
          token: admin.token,
          body: { name: "o", org_id: orgId, role: "owner" }
        })
        expect(tooHigh.status).toBe(403)
        const inherited = yield* api.call("POST", "/v1/api-keys", {
          token: admin.token,
          body: { name: "a", org_id: orgId }
        })
        expect(inherited).toMatchObject({ status: 201, body: { org_id: orgId, role: "admin" } })
        const memberKey = yield* api.call("POST", "/v1/api-keys", {
          token: admin.token,
          body: { name: "ro", org_id: orgId, role: "member" }
        })
        expect(memberKey.body.role).toBe("member")
        const listed = yield* api.call("GET", `/v1/api-keys?org_id=${orgId}`, { token: admin.token })
        expect(listed.body.keys.map((k: any) => k.key_id)).toEqual(
          expect.arrayContaining([inherited.body.key_id, memberKey.body.key_id])
        )
        expect((yield* api.call("GET", `/v1/api-keys?org_id=${orgId}`, { token: member.token })).status).toBe(403)

        // The member-role key reads the organization's agents but may not write.
        const read = yield* api.call("GET", `/v1/orgs/${orgId}`, { apiKey: memberKey.body.key })
        expect(read).toMatchObject({ status: 200, body: { role: "member" } })
        const write = yield* api.call("POST", `/v1/orgs/${orgId}/invites`, {
          apiKey: memberKey.body.key,
          body: { email: "x@example.test", role: "member" }
        })
        expect(write.status).toBe(403)
        void orgAgent
      })
    )
  })
})

describe("IdentityTokens", () => {
  it.effect("refuses tokens without exp or sub, and unsigned (alg none) tokens", () =>
    Effect.gen(function* () {
      const verifier = yield* verifierWith({ jwtSecret: Option.some(Redacted.make("s3cret")) })
      const key = new TextEncoder().encode("s3cret")
      const noExp = yield* Effect.promise(() =>
        new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").sign(key)
      )
      const noSub = yield* Effect.promise(() =>
        new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(key)
      )
      const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(
        `{"sub":"u","exp":${now() + 60}}`
      ).toString("base64url")}.`
      for (const token of [noExp, noSub, unsigned]) {
        expect((yield* Effect.flip(verifier.verify(token)))._tag).toBe("InvalidToken")
      }
      const issuedAt = now()
      const good = yield* Effect.promise(() =>
        IdentityTokens.mintToken("s3cret", { sub: "u", email: "u@example.test", issuedAt, ttlSeconds: 600 })
      )
      // `exp` is kept (in ms), so a long-lived request (the live stream) ends with the token.
      expect(yield* verifier.verify(good)).toStrictEqual({
        sub: "u",
        email: "u@example.test",
        expiresAt: (issuedAt + 600) * 1000
      })
    })
  )

  /** JWKS (asymmetric tokens of an external identity provider) with issuer and audience checks. */
  it.effect("verifies ES256 tokens from the JWKS and checks iss and aud", () =>
    Effect.gen(function* () {
      const { privateKey, publicKey } = yield* Effect.promise(() => generateKeyPair("ES256"))
      const jwk = { ...(yield* Effect.promise(() => exportJWK(publicKey))), kid: "k1", alg: "ES256" }
      const server = createServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ keys: [jwk] }))
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const { port } = server.address() as AddressInfo
      const verifier = yield* verifierWith({
        jwksUrl: Option.some(`http://127.0.0.1:${port}/jwks.json`),
        issuer: Option.some("https://idp.example"),
        audience: Option.some("candor")
      })
      const sign = (claims: { iss?: string; aud?: string; exp?: number }) => {
        let jwt = new SignJWT({ email: "e@example.test" })
          .setProtectedHeader({ alg: "ES256", kid: "k1" })
          .setSubject("idp-user")
        if (claims.iss !== undefined) jwt = jwt.setIssuer(claims.iss)
        if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud)
        jwt = jwt.setExpirationTime(claims.exp ?? now() + 600)
        return Effect.promise(() => jwt.sign(privateKey))
      }
      const exp = now() + 600
      const good = yield* verifier.verify(yield* sign({ iss: "https://idp.example", aud: "candor", exp }))
      expect(good).toStrictEqual({ sub: "idp-user", email: "e@example.test", expiresAt: exp * 1000 })
      const wrongIss = yield* Effect.flip(verifier.verify(yield* sign({ iss: "https://evil.example", aud: "candor" })))
      expect(wrongIss.reason).toBe("token claim iss is not valid")
      const wrongAud = yield* Effect.flip(verifier.verify(yield* sign({ iss: "https://idp.example", aud: "other" })))
      expect(wrongAud.reason).toBe("token claim aud is not valid")
      const expired = yield* Effect.flip(
        verifier.verify(yield* sign({ iss: "https://idp.example", aud: "candor", exp: now() - 10 }))
      )
      expect(expired.reason).toBe("token expired")
      // An HS256 token is not accepted when the provider is a JWKS.
      const hs = yield* Effect.promise(() =>
        IdentityTokens.mintToken("x", { sub: "u", issuer: "https://idp.example", audience: "candor" })
      )
      expect((yield* Effect.flip(verifier.verify(hs)))._tag).toBe("InvalidToken")
    }).pipe(Effect.scoped)
  )
})
