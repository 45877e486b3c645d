/**
 * The public contract in review: the OpenAPI document the API serves at /v1/openapi.json
 * (`OpenApi.fromApi(CandorApi)`, test/api/Limits.test.ts checks the route serves exactly it) is
 * compared with a committed copy, test/fixtures/openapi.json, so a change of any path, body or
 * component shows in the diff of the commit that makes it. After an intended change, rewrite the
 * copy with `npx vitest run --config vitest.unit.config.ts test/api/OpenApiDocument.test.ts -u`
 * and review its diff (CONTRIBUTING.md, "Tests").
 *
 * And one definition per published shape: every component of the document is the JSON Schema of a
 * Schema exported by a module of core/schema (or of a schema such a Schema holds), identical to it,
 * so no group, handler or adapter publishes a shape of its own.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import * as OpenApiJsonSchema from "@effect/platform/OpenApiJsonSchema"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { readdirSync } from "node:fs"
import { CandorApi } from "../../src/api/Api.js"

/** As a reviewer reads it: two-space JSON, one property a line, a final newline. */
export const renderDocument = (): string => JSON.stringify(OpenApi.fromApi(CandorApi), null, 2) + "\n"

/**
 * Components that no core/schema Schema defines, each for a reason: `PropertyKey` is left behind by
 * HttpApi's decode-error body (its `Issue.path`), which src/api/OpenApiErrors.ts replaces by `Error`;
 * nothing in the document refers to it.
 */
const NOT_PUBLISHED_SHAPES = ["PropertyKey"]

/** The JSON Schema definitions of every Schema exported by core/schema/*.ts, by identifier, as HttpApi renders them. */
const coreSchemaDefinitions = async (): Promise<Record<string, unknown>> => {
  const definitions: Record<string, unknown> = {}
  const files = readdirSync(new URL("../../core/schema/", import.meta.url)).filter((file) => file.endsWith(".ts"))
  for (const file of files) {
    const module: Record<string, unknown> = await import(`../../core/schema/${file.replace(/\.ts$/, ".js")}`)
    for (const value of Object.values(module)) {
      // Only Schemas have a JSON Schema; those holding a declared type (a class instance) have none and
      // cannot be a component either, so they are skipped rather than failing the collection.
      if (!Schema.isSchema(value)) continue
      try {
        OpenApiJsonSchema.makeWithDefs(value, { defs: definitions })
      } catch {
        continue
      }
    }
  }
  return definitions
}

describe("the OpenAPI document", () => {
  it("is the committed fixture (test/fixtures/openapi.json)", async () => {
    await expect(renderDocument()).toMatchFileSnapshot("../fixtures/openapi.json")
  })

  it("has only components that are core/schema's Schemas, each as core/schema defines it", async () => {
    const definitions = await coreSchemaDefinitions()
    const components = OpenApi.fromApi(CandorApi).components.schemas as Record<string, unknown>
    const names = Object.keys(components).filter((name) => !NOT_PUBLISHED_SHAPES.includes(name))
    expect(names.length).toBeGreaterThan(300)
    expect(names.filter((name) => !(name in definitions))).toEqual([])
    expect(names.filter((name) => JSON.stringify(components[name]) !== JSON.stringify(definitions[name]))).toEqual([])
  })
})
