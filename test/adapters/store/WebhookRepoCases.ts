/**
 * The webhook repository's cases, run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL: endpoints scoped to their owner, the
 * fan-out's candidates (organization of the agent, the agent's own, active only), one delivery per
 * endpoint and event, delivery pages and redelivery, disabling at 100 failures, the delivery
 * relay's read of an attempt, and migration 0011's folding of the older registrations' event names.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import {
  agentEndpointOwner,
  DISABLE_AFTER_FAILURES,
  orgEndpointOwner,
  WebhookRepo
} from "../../../adapters/store/WebhookRepo.js"
import { FOLD_LEGACY_EVENT_NAMES } from "../../../adapters/store/migrations/0011_webhook_endpoints.js"
import { newEnvelope } from "../../../core/Events.js"

const at = new Date(Date.UTC(2026, 10, 1))
const fields = (url: string) => ({ url, description: "", event_types: [], agent_ids: [] })
const event = (agentId: string | undefined, orgId: string | null, source: string) =>
  newEnvelope({
    type: "agent.paused",
    source,
    org_id: orgId,
    ...(agentId === undefined ? {} : { agent_id: agentId }),
    created_at: at,
    data: {}
  })

export const endpointsAndDeliveries = Effect.gen(function* () {
  const repo = yield* WebhookRepo
  const sql = yield* SqlClient.SqlClient
  yield* sql`insert into orgs (org_id, name, slug, billing_account_id, owner_user_id)
    values ('org_r', 'R', 'r', 'ba_r', 'user-r')`.pipe(Effect.orDie)
  yield* sql`insert into agent_claims (agent_id, agent_hash, user_id, org_id)
    values ('agt-r1', 'h1', 'user-r', 'org_r'), ('agt-r2', 'h2', 'user-r', null)`.pipe(Effect.orDie)
  const org = orgEndpointOwner("org_r")
  const orgEndpoint = yield* repo.create(org, fields("https://a.example/1"), "whsec_a", at)
  const agentEndpoint = yield* repo.create(agentEndpointOwner("agt-r2"), fields("https://a.example/2"), "s", at)
  yield* repo.create(orgEndpointOwner("org_other"), fields("https://a.example/3"), "whsec_c", at)
  expect(yield* repo.count(org)).toBe(1)
  expect(yield* repo.get(agentEndpointOwner("agt-r1"), orgEndpoint.endpoint_id)).toBeUndefined()
  expect(yield* repo.list(org)).toEqual([orgEndpoint])

  // The agent's organization comes from its claim, not from the event.
  const ids = (subscribers: ReadonlyArray<{ endpoint_id: string }>) => subscribers.map((s) => s.endpoint_id)
  // Several events in one read, each answered in its place.
  const found = yield* repo.candidates([
    { org_id: null, agent_id: "agt-r1" },
    { org_id: "org_r", agent_id: "agt-r2" },
    { org_id: "org_r" },
    { org_id: null },
    { org_id: "org_none", agent_id: "agt-unknown" }
  ])
  expect(found.map(ids)).toEqual([
    [orgEndpoint.endpoint_id],
    [agentEndpoint.endpoint_id],
    [orgEndpoint.endpoint_id],
    [],
    []
  ])
  expect(yield* repo.candidates([])).toEqual([])

  const envelope = event("agt-r1", "org_r", "one")
  const subscribers = (yield* repo.candidates([envelope]))[0]!
  const added = yield* repo.addDeliveries([{ envelope, subscribers }], at)
  expect(added).toHaveLength(1)
  expect(yield* repo.addDeliveries([{ envelope, subscribers }], at)).toEqual([])
  const sent = yield* repo.deliveryToSend(added[0]!.delivery_id)
  expect(sent?.envelope).toEqual(envelope)
  expect(JSON.stringify(sent?.envelope)).toBe(
    JSON.stringify((yield* repo.deliveryToSend(added[0]!.delivery_id))?.envelope)
  )
  yield* repo.recordAttempt(added[0]!.delivery_id, 1, {
    status: "delivered",
    last_status: 200,
    last_error: null,
    latency_ms: 12,
    next_attempt_at: null,
    at
  })
  expect((yield* repo.deliveries(org, { limit: 20, offset: 0, status: "delivered" })).total).toBe(1)
  expect((yield* repo.deliveries(org, { limit: 20, offset: 0, status: "pending" })).total).toBe(0)
  const again = yield* repo.redeliver(org, added[0]!.delivery_id, at)
  expect(again).toMatchObject({
    status: "pending",
    sequence: 2,
    attempts: 0,
    last_status: null,
    event_id: envelope.id
  })
  // An attempt of the earlier sequence records nothing.
  yield* repo.recordAttempt(added[0]!.delivery_id, 1, {
    status: "failed",
    last_status: 500,
    last_error: "HTTP 500",
    latency_ms: 1,
    next_attempt_at: null,
    at
  })
  expect((yield* repo.delivery(org, added[0]!.delivery_id))?.status).toBe("pending")
  expect(yield* repo.redeliver(agentEndpointOwner("agt-r2"), added[0]!.delivery_id, at)).toBeUndefined()

  for (let n = 1; n < DISABLE_AFTER_FAILURES; n++)
    expect(yield* repo.endpointAttempt(orgEndpoint.endpoint_id, false, "HTTP 500", at)).toBe(false)
  expect(yield* repo.endpointAttempt(orgEndpoint.endpoint_id, false, "HTTP 500", at)).toBe(true)
  const disabled = yield* repo.find(orgEndpoint.endpoint_id)
  expect(disabled).toMatchObject({ is_active: false, consecutive_failures: 100 })
  expect(disabled?.disabled_reason).toContain("HTTP 500")
  expect(yield* repo.candidates([envelope])).toEqual([[]])
  const enabled = yield* repo.update(org, orgEndpoint.endpoint_id, { is_active: true }, at)
  expect(enabled).toMatchObject({ is_active: true, disabled_reason: null, consecutive_failures: 0 })
  expect(yield* repo.remove(org, orgEndpoint.endpoint_id)).toMatchObject({ endpoint_id: orgEndpoint.endpoint_id })
  expect(yield* repo.remove(org, orgEndpoint.endpoint_id)).toBeUndefined()
  // The deleted endpoint's deliveries stay on record.
  expect((yield* repo.deliveries(org, { limit: 20, offset: 0 })).total).toBe(1)
})

/**
 * The delivery relay's one read per attempt: a pending delivery with its endpoint and the secrets
 * that sign now (both during a rotation's grace period), a disabled or deleted endpoint's delivery
 * without secrets, and nothing for a delivery that is done, of another sequence or unknown.
 */
export const attemptContextRead = Effect.gen(function* () {
  const repo = yield* WebhookRepo
  const sql = yield* SqlClient.SqlClient
  const org = orgEndpointOwner("org_ctx")
  const DAY = 86_400_000
  const rotating = yield* repo.create(org, fields("https://ctx.example/rotating"), "whsec_first", at)
  yield* repo.rotate(org, rotating.endpoint_id, "whsec_second", new Date(at.getTime() + DAY), at)
  const disabled = yield* repo.create(org, fields("https://ctx.example/disabled"), "whsec_disabled", at)
  const deleted = yield* repo.create(org, fields("https://ctx.example/deleted"), "whsec_deleted", at)
  const subscriber = (endpoint: { readonly endpoint_id: string }) => ({
    endpoint_id: endpoint.endpoint_id,
    owner: org,
    event_types: [],
    agent_ids: []
  })
  const envelope = event(undefined, "org_ctx", "ctx")
  const added = yield* repo.addDeliveries(
    [{ envelope, subscribers: [subscriber(rotating), subscriber(disabled), subscriber(deleted)] }],
    at
  )
  const deliveryTo = (endpoint: { readonly endpoint_id: string }) =>
    added.find((delivery) => delivery.endpoint_id === endpoint.endpoint_id)!.delivery_id

  // Pending, with both secrets while the rotated one lives, then the current one alone.
  const sending = yield* repo.attemptContext(deliveryTo(rotating), 1, at)
  expect(sending?._tag).toBe("Send")
  if (sending?._tag !== "Send") return
  expect(sending.secrets).toEqual(["whsec_second", "whsec_first"])
  expect(sending.endpoint).toEqual(yield* repo.find(rotating.endpoint_id))
  expect(sending.delivery).toEqual(yield* repo.deliveryToSend(deliveryTo(rotating)))
  expect(sending.delivery).toMatchObject({ status: "pending", sequence: 1, attempts: 0, event_id: envelope.id })
  // The envelope as stored (jsonb's key order), byte for byte what `deliveryToSend` hands the signer.
  expect(sending.delivery.envelope).toEqual(envelope)
  expect(JSON.stringify(sending.delivery.envelope)).toBe(
    JSON.stringify((yield* repo.deliveryToSend(deliveryTo(rotating)))?.envelope)
  )
  const later = yield* repo.attemptContext(deliveryTo(rotating), 1, new Date(at.getTime() + DAY + 1))
  expect(later?._tag === "Send" ? later.secrets : undefined).toEqual(["whsec_second"])

  // A disabled endpoint: its reason, and its secrets not opened (one that no longer opens does not fail the read).
  yield* repo.update(org, disabled.endpoint_id, { is_active: false }, at)
  yield* sql`update webhooks set secret_sealed = 'not-a-sealed-value'
    where registration_id = ${disabled.endpoint_id}`.pipe(Effect.orDie)
  const toDisabled = yield* repo.attemptContext(deliveryTo(disabled), 1, at)
  expect(toDisabled).toMatchObject({
    _tag: "EndpointDisabled",
    delivery: { delivery_id: deliveryTo(disabled), endpoint_id: disabled.endpoint_id },
    endpoint: { endpoint_id: disabled.endpoint_id, is_active: false, disabled_reason: "disabled through the API" }
  })
  expect(toDisabled).not.toHaveProperty("secrets")

  // A deleted endpoint: the delivery alone.
  yield* repo.remove(org, deleted.endpoint_id)
  const toDeleted = yield* repo.attemptContext(deliveryTo(deleted), 1, at)
  expect(toDeleted).toMatchObject({ _tag: "EndpointDeleted", delivery: { delivery_id: deliveryTo(deleted) } })
  expect(toDeleted).not.toHaveProperty("endpoint")

  // Done, of an earlier or later sequence, unknown: nothing.
  yield* repo.recordAttempt(deliveryTo(rotating), 1, {
    status: "delivered",
    last_status: 200,
    last_error: null,
    latency_ms: 5,
    next_attempt_at: null,
    at
  })
  expect(yield* repo.attemptContext(deliveryTo(rotating), 1, at)).toBeUndefined()
  yield* repo.redeliver(org, deliveryTo(rotating), at)
  expect(yield* repo.attemptContext(deliveryTo(rotating), 1, at)).toBeUndefined()
  expect(yield* repo.attemptContext(deliveryTo(rotating), 3, at)).toBeUndefined()
  expect(yield* repo.attemptContext(deliveryTo(rotating), 2, at)).toMatchObject({
    _tag: "Send",
    delivery: { sequence: 2, status: "pending" }
  })
  expect(yield* repo.attemptContext("whd-unknown", 1, at)).toBeUndefined()
})

export const legacyEventNamesFolded = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Rows as the older per-agent registrations left them: an agent's, under the older event names.
  const legacy = (id: string, events: ReadonlyArray<string>) =>
    sql`insert into webhooks (registration_id, agent_id, callback_url, legacy_secret, events)
      values (${id}, 'agt-legacy', 'https://legacy.example/hook', ${"x".repeat(40)}, ${JSON.stringify(events)}::jsonb)`.pipe(
      Effect.orDie
    )
  yield* legacy("reg-fold-1", ["verdict", "drift_alert", "containment", "agent.killed"])
  yield* legacy("reg-fold-2", ["agent.paused", "containment"])
  yield* legacy("reg-fold-3", ["agent.resumed"])
  yield* sql.unsafe(FOLD_LEGACY_EVENT_NAMES).pipe(Effect.orDie)
  const rows = yield* sql<{ registration_id: string; events: ReadonlyArray<string> }>`
    select registration_id, events from webhooks where registration_id like 'reg-fold-%' order by registration_id`.pipe(
    Effect.orDie
  )
  expect(rows.map((row) => row.events)).toEqual([
    ["agent.killed", "agent.paused", "drift.detected", "verdict.boundary_violation", "verdict.review_needed"],
    ["agent.paused"],
    ["agent.resumed"]
  ])
})
