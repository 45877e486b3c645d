/**
 * The public contract in review: the OpenAPI document the API serves at /v1/openapi.json
 * (`OpenApi.fromApi(CandorApi)`, test/api/Limits.test.ts checks the route serves exactly it) is
 * compared with a committed copy, test/fixtures/openapi.json, so a change of any path, body or
 * component shows in the diff of the commit that makes it. After an intended change, rewrite the
 * copy with `npx vitest run --config vitest.unit.config.ts test/api/OpenApiDocument.test.ts -u`
 * and review its diff (CONTRIBUTING.md, "Tests").
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { CandorApi } from "../../src/api/Api.js"

/** As a reviewer reads it: two-space JSON, one property a line, a final newline. */
export const renderDocument = (): string => JSON.stringify(OpenApi.fromApi(CandorApi), null, 2) + "\n"

describe("the OpenAPI document", () => {
  it("is the committed fixture (test/fixtures/openapi.json)", async () => {
    await expect(renderDocument()).toMatchFileSnapshot("../fixtures/openapi.json")
  })
})
