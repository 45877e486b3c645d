/**
 * The routes that answer without credentials (issue 24, deliverables 6 and 7; SECURITY.md,
 * "Unauthenticated routes"), on records the real actors made:
 *
 * - every served route without the Authentication middleware has a rate class, and SECURITY.md lists it;
 * - private means private: for each public route that takes an agent, checkpoint or team id ×
 *   {public agent, private agent, unknown id} × {anonymous, member credential, stranger credential},
 *   the status and body are as documented (a private id answers exactly as an unknown one);
 * - per-client limits: 300 anonymous chain verifications at once get 10 answers and 429s with
 *   Retry-After; 300 clients behind a trusted proxy get their answers from one chain pass; a second
 *   verify of an unchanged log does no verification, a grown one is verified incrementally;
 * - `POST /v1/verify` bodies over 1 MiB are 413.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { readFileSync } from "node:fs"
import { randomUUID } from "node:crypto"
import { parseTrustedProxies } from "../../adapters/http/ClientAddress.js"
import { chainCertificates, chainPasses } from "../../adapters/metrics/VerificationMetrics.js"
import * as Either from "effect/Either"
import * as ApiLive from "../../src/api/ApiLive.js"
import { HealthRoutes, Readiness } from "../../src/http/Health.js"
import { metricsRoute } from "../../src/http/Metrics.js"
import { apiRoutes, classifier } from "../../src/http/PublicRateLimit.js"
import { DEFAULT_PUBLIC_RATE_LIMITS, PUBLIC_ROUTES } from "../../src/http/PublicRoutes.js"
import { commitEvents, world } from "../verification/Support.js"
import { ApiHarness, TEST_PLAN_RATES } from "./Support.js"

const count = (metric: Metric.Metric.Counter<number>) =>
  Effect.map(Metric.value(metric), (state) => Number(state.count))

const passes = (kind: "full" | "incremental") => count(chainPasses.pipe(Metric.tagged("kind", kind)))

/** Every route the API's layers register (what `candor serve` mounts on PORT besides Serve.ts's own middleware). */
const servedRoutes = Effect.gen(function* () {
  const recorded: Array<string> = []
  const record = (method: string, path: string) => recorded.push(`${method} ${path}`)
  const recorder: any = {
    [HttpLayerRouter.TypeId]: HttpLayerRouter.TypeId,
    prefixed() {
      return recorder
    },
    add: (method: string, path: string) => Effect.sync(() => record(method, path)),
    addAll: (routes: ReadonlyArray<{ method: string; path: string }>) =>
      Effect.sync(() => routes.forEach((route) => record(route.method, route.path))),
    addGlobalMiddleware: () => Effect.void,
    asHttpEffect: () => Effect.die("not served")
  }
  const routes = Layer.mergeAll(
    ApiLive.layer({ planRates: TEST_PLAN_RATES, maxBodyBytes: ApiLive.DEFAULT_MAX_BODY_BYTES }),
    HealthRoutes.pipe(Layer.provide(Readiness.none)),
    metricsRoute(Effect.succeed([]))
  ).pipe(Layer.provide(Layer.succeed(HttpLayerRouter.HttpRouter, recorder)))
  yield* Effect.scoped(Layer.build(routes as Layer.Layer<never, unknown, any>))
  return [...new Set(recorded)]
})

const securityMd = readFileSync(new URL("../../SECURITY.md", import.meta.url), "utf8")

/** `/v1/agents/:agent_id/merkle-root` with the ids given (and the query a route needs). */
const pathOf = (template: string, ids: { agent: string; checkpoint: string; team: string }) =>
  template
    .replace(":agent_id", ids.agent)
    .replace(":checkpoint_id", ids.checkpoint)
    .replace(":team_id", ids.team)
    .concat(template.endsWith("/consistency-proof") ? "?from=1" : "")

layer(world(), { timeout: "180 seconds", excludeTestServices: true })("public routes", (it) => {
  it.effect("every served route without credentials has a rate class, and SECURITY.md lists it", () =>
    Effect.gen(function* () {
      const served = yield* servedRoutes
      const authenticated = new Set(
        apiRoutes()
          .filter((route) => route.authenticated)
          .map((route) => `${route.method} ${route.path}`)
      )
      const publicRoutes = served.filter((route) => !authenticated.has(route))
      const listed = new Set(PUBLIC_ROUTES.map((route) => `${route.method} ${route.path}`))
      // A new public route must be given a class in src/http/PublicRoutes.ts…
      expect(publicRoutes.filter((route) => !listed.has(route))).toStrictEqual([])
      // …and the table names no route that is not served.
      expect([...listed].filter((route) => !publicRoutes.includes(route))).toStrictEqual([])
      const classify = classifier()
      for (const route of PUBLIC_ROUTES) {
        const sample = pathOf(route.path.replace("*", "assets/x.js"), { agent: "a", checkpoint: "c", team: "t" })
        expect(classify(route.method, sample), `${route.method} ${route.path}`).toBe(route.rateClass)
        expect(securityMd, `SECURITY.md lists ${route.method} ${route.path}`).toContain(
          `| ${route.method} | \`${route.path}\` | ${route.rateClass} |`
        )
      }
      // The router's own precedence: a literal segment is its route, not an agent id.
      expect(classify("GET", "/v1/reputation/search?q=x")).toBe("authenticated")
      expect(classify("GET", "/v1/reputation/benchmarks")).toBe("listing")
      expect(classify("HEAD", "/v1/keys")).toBe("static")
      expect(classify("GET", "/nowhere")).toBe("other")
    })
  )

  it.effect(
    "a private agent, its checkpoints and its teams answer as unknown ids to anonymous and stranger callers, not to members",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { member, orgId, owner, userB } = api.fixtures
        const claim = () => api.claimAgent({ userId: owner.userId, orgId })
        const [shown, hidden, other] = [yield* claim(), yield* claim(), yield* claim()]
        for (const [agentId, visibility] of [
          [shown, "public"],
          [hidden, "private"],
          [other, "public"]
        ] as const) {
          const set = yield* api.call("PUT", `/v1/agents/${agentId}/visibility`, {
            token: owner.token,
            body: { visibility }
          })
          expect(set.status).toBe(200)
        }
        const [shownCheckpoint] = yield* commitEvents(shown, [[], [], []])
        const [hiddenCheckpoint] = yield* commitEvents(hidden, [[], [], []])
        const team = (agentIds: Array<string>) =>
          Effect.gen(function* () {
            const created = yield* api.call("POST", "/v1/teams", {
              token: owner.token,
              body: { org_id: orgId, name: `team-${randomUUID().slice(0, 8)}`, agent_ids: agentIds }
            })
            expect(created.status, JSON.stringify(created.body)).toBe(201)
            const teamId = created.body.team.team_id as string
            yield* api.call("POST", `/v1/teams/${teamId}/reputation/recompute`, { token: owner.token })
            return teamId
          })
        const subjects = {
          public: { agent: shown, checkpoint: shownCheckpoint!, team: yield* team([shown, other]) },
          private: { agent: hidden, checkpoint: hiddenCheckpoint!, team: yield* team([hidden, other]) },
          unknown: {
            agent: `agt-unknown-${randomUUID().slice(0, 8)}`,
            checkpoint: `chk-${randomUUID()}`,
            team: randomUUID()
          }
        }
        const callers = { anonymous: {}, member: { token: member.token }, stranger: { token: userB.token } }
        const routes = PUBLIC_ROUTES.filter((route) => route.subject !== undefined)
        expect(routes.length).toBeGreaterThanOrEqual(13)
        const anonymize = (body: unknown, ids: Record<string, string>) =>
          Object.values(ids).reduce((text, id) => text.split(id).join("<id>"), JSON.stringify(body))
        for (const route of routes) {
          const badge = route.path.endsWith("badge.svg")
          for (const [callerName, caller] of Object.entries(callers)) {
            const answers: Record<string, { status: number; body: unknown; type: string | null }> = {}
            for (const [subjectName, ids] of Object.entries(subjects)) {
              const res = yield* api.call(route.method, pathOf(route.path, ids), caller)
              answers[subjectName] = { status: res.status, body: res.body, type: res.headers.get("content-type") }
              const label = `${route.method} ${pathOf(route.path, ids)} (${subjectName}) as ${callerName}: ${JSON.stringify(res.body).slice(0, 200)}`
              const visible = subjectName === "public" || (subjectName === "private" && callerName === "member")
              // A badge is an image either way: "Not Rated" for what may not be shown.
              expect(res.status, label).toBe(badge || visible ? 200 : 404)
              // What a credential is shown never sits in a shared cache.
              if (callerName !== "anonymous") expect(res.headers.get("cache-control"), label).toBe("private, no-store")
            }
            const hiddenAnswer = anonymize(answers["private"]!.body, subjects.private)
            const unknownAnswer = anonymize(answers["unknown"]!.body, subjects.unknown)
            const label = `${route.method} ${route.path} as ${callerName}`
            if (callerName === "member") expect(hiddenAnswer, label).not.toBe(unknownAnswer)
            else {
              expect(hiddenAnswer, label).toBe(unknownAnswer)
              expect(answers["private"]!.type, label).toBe(answers["unknown"]!.type)
            }
          }
        }
        // Search lists a private agent to its readers only (its score is stored by now: the members read it).
        const search = (token: string) =>
          api.call("GET", `/v1/reputation/search?q=${hidden}`, { token }).pipe(Effect.map((res) => res.body.total))
        expect(yield* search(member.token)).toBe(1)
        expect(yield* search(userB.token)).toBe(0)
      })
  )
})

layer(
  world({
    harness: {
      publicRateLimits: DEFAULT_PUBLIC_RATE_LIMITS,
      trustedProxies: Either.getOrThrow(parseTrustedProxies("127.0.0.1/32, ::1"))
    }
  }),
  { timeout: "180 seconds", excludeTestServices: true }
)("public routes under their default limits", (it) => {
  it.effect(
    "300 anonymous chain verifications at once from one client: 10 answered, the rest 429 {error} with Retry-After",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = `agt-flood-${randomUUID().slice(0, 8)}`
        yield* commitEvents(agentId, [[], [], [], []])
        const fullBefore = yield* passes("full")
        const client = { headers: { "x-forwarded-for": "198.51.100.7" } }
        const responses = yield* Effect.all(
          Array.from({ length: 300 }, () => api.call("GET", `/v1/reputation/${agentId}/verify`, client)),
          { concurrency: "unbounded" }
        )
        const ok = responses.filter((res) => res.status === 200)
        const limited = responses.filter((res) => res.status === 429)
        // The burst of 10, and at most one more refilled (one every 6 s) while they run.
        expect(ok.length).toBeGreaterThanOrEqual(10)
        expect(ok.length).toBeLessThanOrEqual(11)
        expect(ok.length + limited.length).toBe(300)
        expect(ok[0]!.body).toMatchObject({ agent_id: agentId, valid: true })
        expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(limited[0]!.body).toStrictEqual({
          error: expect.stringMatching(/^too many requests from your address to the chain routes: retry in \d+ s$/)
        })
        // The answers came from one pass over the log.
        expect((yield* passes("full")) - fullBefore).toBe(1)
        // Another client has its own budget; an IPv6 client is limited by its /64.
        const other = yield* api.call("GET", `/v1/reputation/${agentId}/verify`, {
          headers: { "x-forwarded-for": "203.0.113.9" }
        })
        expect(other.status).toBe(200)
        const six = (address: string) =>
          api.call("GET", `/v1/reputation/${agentId}/verify`, { headers: { "x-forwarded-for": address } })
        for (let i = 0; i < 10; i++) expect((yield* six(`2001:db8:1:2::${i + 1}`)).status).toBe(200)
        expect((yield* six("2001:db8:1:2:ffff:ffff:ffff:ffff")).status).toBe(429)
        expect((yield* six("2001:db8:1:3::1")).status).toBe(200)
        // A client's own X-Forwarded-For entries left of the proxy's are not believed.
        expect(
          (yield* api.call("GET", `/v1/reputation/${agentId}/verify`, {
            headers: { "x-forwarded-for": "192.0.2.1, 198.51.100.7" }
          })).status
        ).toBe(429)
      })
  )

  it.effect(
    "300 clients at once get their verification from one pass; an unchanged log is not verified again, a grown one only in its new part",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = `agt-many-${randomUUID().slice(0, 8)}`
        yield* commitEvents(agentId, [[], [], []])
        const [full, incremental, certificates] = [
          yield* passes("full"),
          yield* passes("incremental"),
          yield* count(chainCertificates)
        ]
        const verify = (client: number) =>
          api.call("GET", `/v1/reputation/${agentId}/verify`, {
            headers: { "x-forwarded-for": `10.${client >> 8}.${client & 255}.1` }
          })
        const responses = yield* Effect.all(
          Array.from({ length: 300 }, (_, i) => verify(i)),
          { concurrency: "unbounded" }
        )
        expect(responses.map((res) => res.status)).toStrictEqual(Array.from({ length: 300 }, () => 200))
        expect(responses.every((res) => res.body.valid === true && res.body.chain.length === 3)).toBe(true)
        expect((yield* passes("full")) - full).toBe(1)
        expect((yield* count(chainCertificates)) - certificates).toBe(3)

        // Unchanged: no certificate read again.
        expect((yield* verify(1000)).body.valid).toBe(true)
        expect((yield* count(chainCertificates)) - certificates).toBe(3)

        // Grown by two: the two new ones only.
        yield* commitEvents(agentId, [[], []])
        const grown = yield* verify(1001)
        expect(grown.body).toMatchObject({ valid: true, chain: { length: 5 }, merkle: { tree_size: 5, valid: true } })
        expect((yield* passes("incremental")) - incremental).toBe(1)
        expect((yield* count(chainCertificates)) - certificates).toBe(5)
      })
  )

  it.effect(
    "the reputation page verifies a log not verified at its size only with one of the client's chain tokens",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const spender = { headers: { "x-forwarded-for": "198.51.100.50" } }
        const agentId = `agt-page-${randomUUID().slice(0, 8)}`
        yield* commitEvents(agentId, [[], []])
        const status = (page: { body: string }) => /data-valid="(\w+)"/.exec(page.body)?.[1]
        const elsewhere = `agt-page-other-${randomUUID().slice(0, 8)}`
        yield* commitEvents(elsewhere, [[]])
        // Its first view verifies the log (one chain token); a verified size costs nothing after.
        const first = yield* api.call("GET", `/agents/${agentId}/reputation`, spender)
        expect(first.status).toBe(200)
        expect(status(first)).toBe("true")
        expect(status(yield* api.call("GET", `/agents/${agentId}/reputation`, spender))).toBe("true")
        // The log grows, and the client spends its other chain tokens elsewhere (at once, so none refills).
        yield* commitEvents(agentId, [[]])
        for (let i = 0; i < 9; i++)
          expect((yield* api.call("GET", `/v1/reputation/${elsewhere}/verify`, spender)).status).toBe(200)
        // The grown log needs a pass the client has no token for: "not checked", still a 200 page.
        const grown = yield* api.call("GET", `/agents/${agentId}/reputation`, spender)
        expect(grown.status).toBe(200)
        expect(status(grown)).toBe("unknown")
        // Another client pays for the pass; then everyone sees it.
        expect(
          status(
            yield* api.call("GET", `/agents/${agentId}/reputation`, { headers: { "x-forwarded-for": "198.51.100.51" } })
          )
        ).toBe("true")
        expect(status(yield* api.call("GET", `/agents/${agentId}/reputation`, spender))).toBe("true")
      })
  )

  it.effect("POST /v1/verify refuses a body over 1 MiB with 413 {error}", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const res = yield* api.call("POST", "/v1/verify", {
        body: { certificate: { padding: "x".repeat(1024 * 1024) } },
        headers: { "x-forwarded-for": "198.51.100.200" }
      })
      expect(res.status).toBe(413)
      expect(res.body).toStrictEqual({ error: `request body is larger than ${1024 * 1024} bytes` })
    })
  )

  it.effect("credentials on an authenticated route are not limited per client, guessed ones are", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const guesser = { "x-forwarded-for": "198.51.100.66" }
      // 100 guesses at once: the burst of `other` (60) is looked up and answered 401, the rest refused first.
      const guesses = yield* Effect.all(
        Array.from({ length: 100 }, (_, i) =>
          api.call("GET", "/v1/plans", { apiKey: `cnd_guess_${i}`, headers: guesser })
        ),
        { concurrency: "unbounded" }
      )
      const unauthorized = guesses.filter((res) => res.status === 401).length
      expect(unauthorized).toBeGreaterThanOrEqual(60)
      // (and the few refilled at 5 a second while they arrive)
      expect(unauthorized).toBeLessThanOrEqual(80)
      expect(guesses.filter((res) => res.status === 429).length).toBe(100 - unauthorized)
      // Valid keys from one address, many in flight together, get their tokens back: all pass.
      const busy = { "x-forwarded-for": "198.51.100.68" }
      const valid = yield* Effect.all(
        Array.from({ length: 100 }, () =>
          api.call("GET", "/v1/plans", { token: api.fixtures.userA.token, headers: busy })
        ),
        { concurrency: 20 }
      )
      expect(valid.every((res) => res.status === 200)).toBe(true)
      // A valid credential from another address is unaffected, and so is this one's own page of records.
      expect((yield* api.call("GET", "/v1/plans", { token: api.fixtures.userA.token })).status).toBe(200)
      expect((yield* api.call("GET", "/v1/keys", { headers: guesser })).status).toBe(200)
      // Anonymous requests have a bucket of their own: unknown paths spend it, not the guesses' budget…
      expect((yield* api.call("GET", "/nowhere", { headers: guesser })).status).toBe(404)
      const neighbour = { "x-forwarded-for": "198.51.100.67" }
      const unknown = yield* Effect.all(
        Array.from({ length: 100 }, () => api.call("GET", "/nowhere", { headers: neighbour })),
        { concurrency: "unbounded" }
      )
      expect(unknown.some((res) => res.status === 429)).toBe(true)
      // …so a valid key at that address still works.
      expect(
        (yield* api.call("GET", "/v1/plans", { token: api.fixtures.userA.token, headers: neighbour })).status
      ).toBe(200)
    })
  )
})
