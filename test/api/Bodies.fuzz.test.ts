/**
 * Every request body the management API takes, fuzzed (issue 24, "Fuzzed edges"): for each POST,
 * PUT and PATCH route, bodies that are not JSON, JSON of any shape, and bodies of the route's own
 * schema with one member replaced by anything, sent by a caller allowed to use the route. Whatever
 * arrives, the API answers in the contract: never a 500, a 4xx or 503 always `{"error": "<text>"}`,
 * and a success is JSON.
 *
 * Bodies of the route's schema come from Effect's `Arbitrary` (which runs on the fast-check that
 * Effect bundles), sampled under the same seed and then mutated here; a schema `Arbitrary` cannot
 * build (a declaration) only gets the schemaless bodies.
 */
import { expect, layer } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { CandorApi } from "../../src/api/Api.js"
import { fuzzParameters, FIXED_SEED } from "../support/Fuzz.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

interface Route {
  readonly method: "POST" | "PUT" | "PATCH"
  readonly path: string
  readonly payload: Option.Option<Schema.Schema.Any>
}

const ROUTES: ReadonlyArray<Route> = Object.values(CandorApi.groups).flatMap((group: any) =>
  Object.values(group.endpoints)
    .filter((e: any) => e.method === "POST" || e.method === "PUT" || e.method === "PATCH")
    .map((e: any): Route => ({ method: e.method, path: e.path, payload: e.payloadSchema }))
)

/** Valid-shaped bodies of the route's schema (encoded, as a client sends them), or none when Arbitrary cannot build one. */
const schemaSamples = (payload: Option.Option<Schema.Schema.Any>, count: number): ReadonlyArray<unknown> => {
  if (Option.isNone(payload)) return []
  try {
    const schema = payload.value as Schema.Schema<unknown, unknown, never>
    const encode = Schema.encodeSync(schema)
    return FastCheck.sample(Arbitrary.make(schema), { seed: FIXED_SEED, numRuns: count }).flatMap((value) => {
      try {
        return [encode(value)]
      } catch {
        return []
      }
    })
  } catch {
    return []
  }
}

/** A JSON object with one member replaced by any JSON value, or dropped. */
const mutated = (samples: ReadonlyArray<unknown>): fc.Arbitrary<unknown> =>
  fc
    .tuple(fc.constantFrom(...samples), fc.nat(), fc.option(fc.jsonValue({ maxDepth: 3 })))
    .map(([sample, pick, replacement]) => {
      if (typeof sample !== "object" || sample === null || Array.isArray(sample)) return replacement ?? sample
      const keys = Object.keys(sample)
      if (keys.length === 0) return { extra: replacement }
      const key = keys[pick % keys.length]!
      const copy: Record<string, unknown> = { ...(sample as Record<string, unknown>) }
      if (replacement === null) delete copy[key]
      else copy[key] = replacement
      return copy
    })

/** A raw body: the route's text as sent, JSON-encoded unless it is already a string that is not JSON. */
interface RawBody {
  readonly text: string
  readonly contentType: string
}

const json = (value: unknown): RawBody => ({ text: JSON.stringify(value) ?? "null", contentType: "application/json" })

const bodies = (route: Route): fc.Arbitrary<RawBody> => {
  const samples = schemaSamples(route.payload, 50)
  const anyJson = fc.jsonValue({ maxDepth: 4 }).map(json)
  const notJson = fc.oneof(
    fc.string({ maxLength: 200 }).map((text) => ({ text, contentType: "application/json" })),
    fc.string({ maxLength: 200 }).map((text) => ({ text, contentType: "text/plain" })),
    fc
      .uint8Array({ maxLength: 200 })
      .map((bytes) => ({ text: Buffer.from(bytes).toString("latin1"), contentType: "application/json" }))
  )
  const deep = fc.nat({ max: 5_000 }).map((depth) => ({
    text: "[".repeat(depth) + "]".repeat(depth),
    contentType: "application/json"
  }))
  const arbitraries: Array<fc.Arbitrary<RawBody>> = [anyJson, notJson, deep]
  if (samples.length > 0) arbitraries.push(mutated(samples).map(json), fc.constantFrom(...samples).map(json))
  return fc.oneof(...arbitraries)
}

/** The route's path with its parameters filled from the fixtures (unknown ids where no fixture fits). */
const pathOf = (route: Route, fixtures: Harness.Fixtures): string =>
  route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
    switch (name) {
      case "agent_id":
        return fixtures.orgAgent
      case "org_id":
        return fixtures.orgId
      default:
        return `fuzz-${name}`
    }
  })

/** The caller allowed to use the route: the service-role key on administrative routes, else the organization's Owner. */
const callerOf = (route: Route, api: ApiHarness["Type"]): string =>
  route.path.startsWith("/v1/admin") || route.path.startsWith("/v1/enterprise") || route.path.endsWith("/card")
    ? api.serviceRoleKey
    : api.fixtures.owner.token

layer(Harness.layer(), { timeout: "300 seconds" })("API bodies, fuzzed", (it) => {
  it("covers every route that takes a body", () => {
    expect(ROUTES.length).toBeGreaterThan(50)
  })

  for (const route of ROUTES) {
    it.effect(
      `${route.method} ${route.path} answers any body within the contract`,
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const path = pathOf(route, api.fixtures)
          const token = callerOf(route, api)
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(bodies(route), async (body) => {
                const response = await fetch(`${api.url}${path}`, {
                  method: route.method,
                  headers: { authorization: `Bearer ${token}`, "content-type": body.contentType },
                  body: body.text
                })
                const text = await response.text()
                const label = `${route.method} ${path} with ${body.text.slice(0, 120)} → ${response.status} ${text.slice(0, 200)}`
                expect(response.status, label).not.toBe(500)
                expect(response.status, label).toBeLessThanOrEqual(503)
                if (response.status >= 400) {
                  const parsed: unknown = JSON.parse(text)
                  expect(parsed, label).toStrictEqual({ error: expect.any(String) })
                } else if (text !== "") {
                  expect(() => JSON.parse(text), label).not.toThrow()
                }
              }),
              fuzzParameters(12)
            )
          )
        }),
      120_000
    )
  }
})
