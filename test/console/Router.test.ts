/** The console's hash routes: every page, ids encoded and decoded, malformed input falls back to the fleet. */
import { describe, expect, it } from "@effect/vitest"
import { hrefOf, parseRoute, type Route } from "../../console/src/Router.js"

describe("console routes", () => {
  it("parses every page and round-trips through hrefOf", () => {
    const routes: ReadonlyArray<Route> = [
      { page: "fleet" },
      { page: "feed" },
      { page: "agent", agentId: "agt-1/2 x" },
      { page: "verify" },
      { page: "verify", checkpointId: "ic-9" },
      { page: "webhooks" },
      { page: "organization" },
      { page: "signIn", code: "abc_DEF-123" }
    ]
    for (const route of routes) expect(parseRoute(hrefOf(route))).toEqual(route)
    expect(hrefOf({ page: "agent", agentId: "a/b" })).toBe("#/agents/a%2Fb")
  })

  it("falls back to the fleet for unknown, empty or malformed hashes", () => {
    for (const hash of ["", "#", "#/", "#/nope", "#/agents", "#/agents/", "#/sign-in", "#/agents/%E0%A4%A"])
      expect(parseRoute(hash)).toEqual({ page: "fleet" })
  })
})
