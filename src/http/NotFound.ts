/**
 * A request no route claims answers 404 with the project's error body, `{"error": …}`, instead of
 * the router's empty 404.
 *
 * A global middleware rather than a wildcard route: a catch-all route would also swallow `HEAD`
 * requests that the router otherwise answers from the matching `GET` route.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"

const notFound = HttpServerResponse.unsafeJson({ error: "not found" }, { status: 404 })

export const NotFoundLive = HttpLayerRouter.middleware<{ handles: HttpServerError.RouteNotFound }>()(
  (httpEffect) => Effect.catchTag(httpEffect, "RouteNotFound", () => notFound),
  { global: true }
)
