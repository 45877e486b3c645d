/** The console's names for agents and organizations (GET /v1/agents rows), and the fleet search over them. */
import { describe, expect, it } from "@effect/vitest"
import { type FleetAgent, filterFleet, NO_FILTER } from "../../console/src/fleet/Fleet.js"
import { agentTitle, directoryOf, orgTitle } from "../../console/src/fleet/Names.js"

const agent = (id: string, names: Partial<Pick<FleetAgent, "display_name" | "org_id" | "org_name">>): FleetAgent => ({
  agent_id: id,
  display_name: null,
  org_id: null,
  org_name: null,
  status: "active",
  enforcement_mode: "observe",
  card_id: null,
  last_seen: null,
  total_checkpoints: 0,
  checkpoint_counts: { clear: 0, review_needed: 0, boundary_violation: 0 },
  claimed: true,
  visibility: "unlisted",
  reputation: null,
  ...names
})

const named = agent("agt-aaa", { display_name: "Billing Bot", org_id: "org_1", org_name: "Acme" })
const bare = agent("agt-bbb", { org_id: "org_2" })
const personal = agent("agt-ccc", {})

describe("console names", () => {
  it("shows the name, else the id; the organization's name, else its id, else personal", () => {
    expect([named, bare, personal].map((a) => [agentTitle(a), orgTitle(a)])).toEqual([
      ["Billing Bot", "Acme"],
      ["agt-bbb", "org_2"],
      ["agt-ccc", "personal"]
    ])
  })

  it("the fleet search matches names as well as ids, ignoring case", () => {
    const search = (query: string) =>
      filterFleet([named, bare, personal], { ...NO_FILTER, query }).map((a) => a.agent_id)
    expect(search("billing")).toEqual(["agt-aaa"])
    expect(search("ACME")).toEqual(["agt-aaa"])
    expect(search("org_2")).toEqual(["agt-bbb"])
    expect(search("agt-c")).toEqual(["agt-ccc"])
    expect(search("nobody")).toEqual([])
    expect(search("  ")).toHaveLength(3)
  })

  it("the feed's directory names agents by id and organizations by id, only those with a name", () => {
    const directory = directoryOf([named, bare, personal])
    expect(directory.agents.get("agt-aaa")?.display_name).toBe("Billing Bot")
    expect(directory.agents.has("agt-ccc")).toBe(true)
    expect([...directory.orgs]).toEqual([["org_1", "Acme"]])
  })
})
