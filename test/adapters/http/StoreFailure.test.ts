/**
 * A StoreError a handler lets through is answered once for every route by the API's error schemas
 * (adapters/http/StoreFailure.ts): 503 when the database is unreachable, else 500, neither quoting
 * the cause.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { StoreFailureErrors } from "../../../adapters/http/StoreFailure.js"
import { StoreError } from "../../../adapters/store/Store.js"

class Probe extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("fail", "/fail/:kind")
    .setPath(Schema.Struct({ kind: Schema.String }))
    .addSuccess(Schema.String)
) {}

class ProbeApi extends HttpApi.make("probe")
  .add(Probe)
  .addError(StoreFailureErrors[0])
  .addError(StoreFailureErrors[1]) {}

const unreachable = { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" }
const broken = { code: "42P01", message: "relation secret_table does not exist" }

const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers.handle("fail", ({ path }) =>
    Effect.fail(new StoreError({ operation: "probe", cause: path.kind === "down" ? unreachable : broken }))
  )
)

const answer = (kind: string) =>
  Effect.promise(async () => {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(ProbeLive), Layer.merge(HttpServer.layerContext))
    )
    try {
      const response = await handler(new Request(`http://localhost/fail/${kind}`))
      return { status: response.status, body: (await response.json()) as unknown }
    } finally {
      await dispose()
    }
  })

describe("StoreFailureErrors", () => {
  it.effect("an unreachable database is a 503 saying to try again", () =>
    Effect.gen(function* () {
      const { body, status } = yield* answer("down")
      expect(status).toBe(503)
      expect(body).toEqual({ _tag: "ServiceUnavailable", error: expect.stringContaining("cannot be reached") })
    })
  )

  it.effect("any other store failure is a 500 that quotes nothing of its cause", () =>
    Effect.gen(function* () {
      const { body, status } = yield* answer("broken")
      expect(status).toBe(500)
      expect(body).toEqual({ _tag: "InternalError", error: "internal error" })
    })
  )
})
