/**
 * How a test says it needs a real server: `describeIntegration` and `layerIntegration` in place
 * of `describe` and @effect/vitest's `layer`, `skipsWithout` for a single test. Tests of a server
 * that is not configured are reported as skipped outside CI (test/support/IntegrationServers.ts);
 * a skipped suite runs none of its hooks, so its layers are never built.
 */
import { layer, type Vitest } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import { describe } from "vitest"
import { type Server, skips } from "./IntegrationServers.js"

export type { Server } from "./IntegrationServers.js"

type Needs = Server | ReadonlyArray<Server>

const list = (needs: Needs): ReadonlyArray<Server> => (typeof needs === "string" ? [needs] : needs)

/** True when a test needing `needs` must be skipped in this run: `it.effect.skipIf(skipsWithout("nats"))`. */
export const skipsWithout = (...servers: ReadonlyArray<Server>): boolean => skips(servers)

/** `describe`, skipped when a server in `needs` is not available. */
export const describeIntegration = (needs: Needs, name: string, body: () => void): void => {
  describe.skipIf(skips(list(needs)))(name, body)
}

/** @effect/vitest's `layer(layer_, options)(name, f)`, skipped when a server in `needs` is not available. */
export const layerIntegration =
  <R, E, const ExcludeTestServices extends boolean = false>(
    needs: Needs,
    layer_: Layer.Layer<R, E>,
    options?: {
      readonly timeout?: Duration.DurationInput
      readonly excludeTestServices?: ExcludeTestServices
    }
  ) =>
  (name: string, f: (it: Vitest.MethodsNonLive<R, ExcludeTestServices>) => void): void =>
    describeIntegration(needs, name, () => layer(layer_, options)(f))
