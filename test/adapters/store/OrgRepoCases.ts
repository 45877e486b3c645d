/**
 * Cases of the repositories of an organization's settings and requests, run in the repository
 * conformance suite (RepositoryConformance.ts) on PGlite and PostgreSQL: its evidence redaction
 * (EvidenceRedactionRepo), its held tool calls (ApprovalRepo), its MCP servers and agents' MCP
 * tokens (McpRepo), its conscience values (OrgConscienceRepo), and its fleet's cards as coherence
 * reads them (CoherenceRepo).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { ApprovalRepo } from "../../../adapters/store/ApprovalRepo.js"
import { EvidenceRedactionRepo } from "../../../adapters/store/EvidenceRedactionRepo.js"
import { CoherenceRepo } from "../../../adapters/store/CoherenceRepo.js"
import { McpRepo } from "../../../adapters/store/McpRepo.js"
import { OrgConscienceRepo } from "../../../adapters/store/OrgConscienceRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import type { Approval } from "../../../core/schema/Approval.js"
import type { OrgConscience } from "../../../core/schema/Conscience.js"
import { claimed } from "./AgentRepoCases.js"
import { card, uniqueId } from "./Fixtures.js"

export const evidenceRedaction = Effect.gen(function* () {
  const repo = yield* EvidenceRedactionRepo
  const orgId = uniqueId("org_red")
  yield* claimed(orgId, [])
  expect(yield* repo.get(orgId)).toBe("none")
  yield* repo.set(orgId, "mask")
  expect(yield* repo.get(orgId)).toBe("mask")
  expect(yield* repo.lock(orgId)).toBe("mask")
  yield* repo.set(orgId, "omit")
  expect(yield* repo.get(orgId)).toBe("omit")
  expect(yield* repo.get(uniqueId("org_none"))).toBeUndefined()
  expect(yield* repo.lock(uniqueId("org_none"))).toBeUndefined()
})

export const approvals = Effect.gen(function* () {
  const repo = yield* ApprovalRepo
  const orgId = uniqueId("org_apr")
  const approval = (n: number, expiresAt: string): Approval => ({
    approval_id: `apr-${randomUUID()}`,
    org_id: orgId,
    agent_id: uniqueId("agt-apr"),
    server_id: n % 2 === 0 ? null : "mcp-1",
    tool: `tool_${n}`,
    arguments_hash: "ab".repeat(32),
    reason: "needs a person",
    requested_at: `2026-11-01T00:0${n}:00.000Z`,
    expires_at: expiresAt,
    status: "pending",
    decided_at: null,
    decided_by: null,
    decision_reason: null
  })
  const [a, b, c, d] = [
    approval(1, "2026-11-01T01:00:00.000Z"),
    approval(2, "2026-11-01T00:30:00.000Z"),
    approval(3, "2026-11-01T01:00:00.000Z"),
    approval(4, "2026-11-01T00:20:00.000Z")
  ] as const
  for (const x of [a, b, c, d]) yield* repo.insert(x)
  expect(yield* repo.get(a.approval_id)).toEqual(a)
  expect(yield* repo.get(`apr-${randomUUID()}`)).toBeUndefined()

  // Settled once; an expired one only when expiry is not checked.
  const at = new Date("2026-11-01T00:40:00.000Z")
  const approved = yield* repo.settle(a.approval_id, { status: "approved", at, by: "user-a", reason: "ok" }, true)
  expect(approved).toEqual({
    ...a,
    status: "approved",
    decided_at: at.toISOString(),
    decided_by: "user-a",
    decision_reason: "ok"
  })
  expect(yield* repo.settle(a.approval_id, { status: "denied", at, by: "user-b", reason: null }, true)).toBeUndefined()
  expect(
    yield* repo.settle(b.approval_id, { status: "approved", at, by: "user-a", reason: null }, true)
  ).toBeUndefined()
  expect(yield* repo.settle(d.approval_id, { status: "cancelled", at, by: null, reason: null }, false)).toMatchObject({
    status: "cancelled"
  })

  // Due ones expire at their own time, earliest first, bounded; once.
  const expired = yield* repo.expireDue(at, 10)
  expect(expired.filter((x) => x.org_id === orgId)).toEqual([{ ...b, status: "expired", decided_at: b.expires_at }])
  expect((yield* repo.expireDue(at, 10)).filter((x) => x.org_id === orgId)).toEqual([])

  // Newest request first, paged, filtered by status; counted.
  const page = yield* repo.page(orgId, { limit: 2, offset: 0 })
  expect(page.total).toBe(4)
  expect(page.approvals.map((x) => x.approval_id)).toEqual([d.approval_id, c.approval_id])
  expect((yield* repo.page(orgId, { limit: 2, offset: 2 })).approvals.map((x) => x.approval_id)).toEqual([
    b.approval_id,
    a.approval_id
  ])
  expect(yield* repo.page(orgId, { status: "pending", limit: 10, offset: 0 })).toEqual({ approvals: [c], total: 1 })
  expect(yield* repo.page(uniqueId("org_apr"), { limit: 10, offset: 0 })).toEqual({ approvals: [], total: 0 })
  // Past the end: no approvals, the total still counted (the page and its total are one statement).
  expect(yield* repo.page(orgId, { limit: 2, offset: 10 })).toEqual({ approvals: [], total: 4 })
})

export const mcpServersAndTokens = Effect.gen(function* () {
  const repo = yield* McpRepo
  const orgId = uniqueId("org_mcp")
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute))
  const second = yield* repo.insertServer(
    { server_id: uniqueId("mcp-b"), org_id: orgId, name: "B", url: "https://b" },
    at(2)
  )
  const first = yield* repo.insertServer(
    { server_id: uniqueId("mcp-a"), org_id: orgId, name: "A", url: "https://a" },
    at(1)
  )
  expect(first).toEqual({
    server_id: first.server_id,
    org_id: orgId,
    name: "A",
    url: "https://a",
    created_at: at(1).toISOString(),
    updated_at: at(1).toISOString()
  })
  expect(yield* repo.countServers(orgId)).toBe(2)
  expect(yield* repo.listServers(orgId)).toEqual([first, second])
  const renamed = yield* repo.updateServer(first.server_id, { name: "A2" }, at(3))
  expect(renamed).toEqual({ ...first, name: "A2", updated_at: at(3).toISOString() })
  expect(yield* repo.getServer(first.server_id)).toEqual(renamed)
  expect(yield* repo.updateServer("mcp-unknown", { url: "https://x" }, at(3))).toBeUndefined()
  expect(yield* repo.deleteServer(second.server_id)).toBe(true)
  expect(yield* repo.deleteServer(second.server_id)).toBe(false)
  expect(yield* repo.getServer(second.server_id)).toBeUndefined()
  expect((yield* repo.allServers).filter((s) => s.org_id === orgId)).toEqual([renamed])

  const agentId = uniqueId("agt-mcp")
  const token = (n: number) => ({
    token_id: uniqueId(`mcpt-${n}`),
    agent_id: agentId,
    org_id: orgId,
    token_hash: uniqueId(`hash-${n}`)
  })
  const later = yield* repo.insertToken(token(2), at(5))
  const earlier = yield* repo.insertToken(token(1), at(4))
  expect(earlier).toMatchObject({
    agent_id: agentId,
    org_id: orgId,
    created_at: at(4).toISOString(),
    last_used_at: null
  })
  expect(yield* repo.countTokens(agentId)).toBe(2)
  expect(yield* repo.listTokens(agentId)).toEqual([earlier, later])
  expect(yield* repo.deleteToken("agt-other", earlier.token_id)).toBeUndefined()
  expect(yield* repo.deleteToken(agentId, earlier.token_id)).toEqual(earlier)
  expect(yield* repo.listTokens(agentId)).toEqual([later])
  expect((yield* repo.allTokens).filter((t) => t.agent_id === agentId)).toEqual([later])
  // A token hash is one token's.
  expect((yield* Effect.either(repo.insertToken({ ...token(3), token_hash: later.token_hash }, at(6))))._tag).toBe(
    "Left"
  )
})

export const orgConscience = Effect.gen(function* () {
  const repo = yield* OrgConscienceRepo
  const orgId = uniqueId("org_con")
  yield* claimed(orgId, [])
  expect(yield* repo.get(uniqueId("org_none"))).toBeUndefined()
  const empty = yield* repo.get(orgId)
  expect(empty).toMatchObject({ org_id: orgId, values: [] })

  const value = (name: string) => ({
    type: "BOUNDARY" as const,
    name,
    content: `never ${name}`,
    severity: "mandatory" as const,
    is_active: true
  })
  const at = "2026-11-01T00:00:00.000Z"
  const [deleting, exfiltrating] = [`cv-${randomUUID()}`, `cv-${randomUUID()}`]
  yield* repo.insert(orgId, { ...value("delete"), value_id: deleting, sort_order: 0 }, "user-c", at)
  yield* repo.insert(orgId, { ...value("exfiltrate"), value_id: exfiltrating, sort_order: 1 }, "user-c", at)
  const names = (layer: OrgConscience | undefined) => layer?.values.map((v) => v.name)
  expect(names(yield* repo.get(orgId))).toEqual(["delete", "exfiltrate"])
  yield* repo.reorder(orgId, [exfiltrating, deleting], "user-c", at)
  expect(names(yield* repo.lock(orgId))).toEqual(["exfiltrate", "delete"])
  yield* repo.update(orgId, deleting, { ...value("delete"), severity: "advisory", is_active: false }, "user-d", at)
  expect((yield* repo.get(orgId))?.values[1]).toMatchObject({ name: "delete", severity: "advisory", is_active: false })
  yield* repo.remove(orgId, exfiltrating)
  expect(names(yield* repo.get(orgId))).toEqual(["delete"])
  yield* repo.setMode(orgId, "replace", true, "user-c", at)
  expect(yield* repo.get(orgId)).toMatchObject({ mode: "replace", enabled: true })

  // The log: ids increasing, read newest first, paged.
  const entry = (action: "create" | "delete", n: number) => ({
    value_id: `v-${n}`,
    action,
    actor: "user-c",
    changes: { name: { from: null, to: `v-${n}` } },
    at: `2026-11-01T00:00:0${n}.000Z`
  })
  const first = yield* repo.appendLog(orgId, entry("create", 1))
  const second = yield* repo.appendLog(orgId, entry("delete", 2))
  expect(second).toBeGreaterThan(first)
  expect(yield* repo.log(orgId, 10, 0)).toEqual([
    {
      value_id: "v-2",
      action: "delete",
      actor: "user-c",
      changes: entry("delete", 2).changes,
      created_at: entry("delete", 2).at
    },
    {
      value_id: "v-1",
      action: "create",
      actor: "user-c",
      changes: entry("create", 1).changes,
      created_at: entry("create", 1).at
    }
  ])
  expect((yield* repo.log(orgId, 1, 1)).map((e) => e.value_id)).toEqual(["v-1"])
})

/** `Store.agentContextInputs`, one statement, reads what the four reads it replaces read. */
export const agentContextInputs = Effect.gen(function* () {
  const store = yield* Store
  const repo = yield* OrgConscienceRepo
  const orgId = uniqueId("org_ctx")
  const [member, loner, unknown] = [uniqueId("agt-ctx"), uniqueId("agt-ctx"), uniqueId("agt-ctx")]
  yield* claimed(orgId, [member])
  const at = "2026-11-01T00:00:00.000Z"
  const value = (name: string, sort_order: number) => ({
    value_id: `cv-${randomUUID()}`,
    type: "BOUNDARY" as const,
    name,
    content: `never ${name}`,
    severity: "mandatory" as const,
    is_active: sort_order !== 1,
    sort_order
  })
  yield* repo.insert(orgId, value("second", 2), "user-c", at)
  yield* repo.insert(orgId, value("first", 0), "user-c", at)
  yield* repo.insert(orgId, value("inactive", 1), "user-c", at)
  yield* repo.setMode(orgId, "replace", true, "user-c", at)
  for (const agentId of [member, loner]) {
    yield* store.putCard(agentId, card(agentId, 30, "card-1"))
    yield* store.putCard(agentId, card(agentId, 60, "card-2"))
    yield* store.putConscienceValues(agentId, [{ type: "FEAR", name: `own-${agentId}`, content: "c", id: "v1" }])
    yield* store.putAgentSettings(agentId, { mode: "enforce", auto_containment_threshold: 3 })
  }

  for (const agentId of [member, loner, unknown]) {
    const inputs = yield* store.agentContextInputs(agentId)
    expect(inputs).toEqual({
      card: yield* store.activeCard(agentId),
      settings: yield* store.agentSettings(agentId),
      agentValues: yield* store.conscienceValues(agentId),
      orgLayer: yield* store.orgConscienceLayer(agentId)
    })
  }
  const inputs = yield* store.agentContextInputs(member)
  expect(inputs.card).toEqual({ card: card(member, 60, "card-2"), version: 2 })
  expect(inputs.settings).toMatchObject({ mode: "enforce", auto_containment_threshold: 3 })
  expect(inputs.orgLayer).toMatchObject({ org_id: orgId, mode: "replace", enabled: true })
  expect(inputs.orgLayer?.values.map((v) => [v.name, v.sort_order, v.is_active])).toEqual([
    ["first", 0, true],
    ["inactive", 1, false],
    ["second", 2, true]
  ])
  expect((yield* store.agentContextInputs(loner)).orgLayer).toBeUndefined()
  expect(yield* store.agentContextInputs(unknown)).toMatchObject({
    card: undefined,
    agentValues: [],
    orgLayer: undefined
  })
})

export const coherenceFleet = Effect.gen(function* () {
  const repo = yield* CoherenceRepo
  const store = yield* Store
  const sql = yield* SqlClient.SqlClient
  const orgId = uniqueId("org_coh")
  const other = uniqueId("org_coh")
  const [carded, bare] = [`${orgId}-a`, `${orgId}-b`]
  yield* claimed(orgId, [carded, bare])
  yield* claimed(other, [])
  expect(yield* repo.fleetVersion(uniqueId("org_none"))).toBeUndefined()
  const versions = Effect.all([repo.fleetVersion(orgId), repo.fleetVersion(other)])
  const [before, otherBefore] = yield* versions
  expect(yield* repo.fleet(orgId)).toEqual({ agents: [], without_card: 2 })

  // A card stored moves its organization's version, and no other.
  const stored = card(carded, 30, "c-coh")
  yield* store.putCard(carded, stored)
  const [after, otherAfter] = yield* versions
  expect(after).not.toBe(before)
  expect(otherAfter).toBe(otherBefore)
  expect(yield* repo.fleet(orgId)).toEqual({
    agents: [
      { agent_id: carded, values: stored.values.declared, conflicts_with: stored.values.conflicts_with ?? null }
    ],
    without_card: 1
  })
  // Unchanged while nothing the fleet reads changes (a claim's visibility is not read).
  yield* sql`update agent_claims set visibility = 'public' where agent_id = ${carded}`
  expect(yield* versions).toEqual([after, otherAfter])

  // A claim moved moves both organizations; one removed moves its own; a card of an agent in no
  // organization moves none.
  yield* sql`update agent_claims set org_id = ${other} where agent_id = ${bare}`
  const [moved, otherMoved] = yield* versions
  expect(moved).not.toBe(after)
  expect(otherMoved).not.toBe(otherAfter)
  yield* sql`delete from agent_claims where agent_id = ${bare}`
  const [, otherRemoved] = yield* versions
  expect(otherRemoved).not.toBe(otherMoved)
  const loner = uniqueId("agt-coh")
  yield* claimed(null, [loner])
  yield* store.putCard(loner, card(loner, 30, "c-loner"))
  expect(yield* versions).toEqual([moved, otherRemoved])
  // Every version is new: one seen is never seen again, whatever the organization.
  expect(new Set([before, otherBefore, after, moved, otherMoved, otherRemoved]).size).toBe(6)
}).pipe(Effect.orDie)
