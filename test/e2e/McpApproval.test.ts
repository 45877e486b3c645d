/**
 * Human approval of MCP tool calls (docs/approvals.md) through a real `candor serve`, in the two
 * deployments where the MCP proxy has no store of its own and must ask another party for the
 * approval: the embedded default (the gateway thread asks the backend thread over the thread bridge)
 * and a split deployment (a `--role gateway` process asks the api and worker processes over NATS,
 * and waits on the approval's KV key). The official MCP SDK is the client, a real SDK server on
 * loopback the server; an Owner approves one held call and denies another through the API.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { mintToken } from "../../adapters/auth/IdentityTokens.js"
import { skipsWithout } from "../support/Integration.js"
import { startFakeMcpServer } from "../adapters/mcp/FakeMcpServer.js"
import { startServe } from "./ServeProcess.js"
import { fetchAs, newAgent, poll, printLogsOnFailure, startSplitDeployment } from "./Support.js"

const JWT_SECRET = randomBytes(32).toString("base64url")
const env = { AUTH_JWT_SECRET: JWT_SECRET, CANDOR_MCP_ALLOW_PRIVATE: "true" }

type Approval = { approval_id: string; status: string; tool: string }

/** An Owner's organization, agent, policy, MCP server and token; a held call approved, another denied. */
const approveAndDeny = (apiUrl: string, gatewayUrl: string) =>
  Effect.gen(function* () {
    const fake = yield* Effect.acquireRelease(
      Effect.promise(() => startFakeMcpServer()),
      (server) => Effect.promise(() => server.close())
    )
    const token = yield* Effect.promise(() =>
      mintToken(JWT_SECRET, { sub: "owner-apr", email: "owner-apr@example.test", ttlSeconds: 3600 })
    )
    const asOwner = fetchAs(token)
    const org = yield* asOwner(`${apiUrl}/v1/orgs`, {
      method: "POST",
      body: JSON.stringify({ name: "Approvals e2e", slug: `apr-${randomBytes(4).toString("hex")}` })
    })
    expect(org.status, JSON.stringify(org.body)).toBe(201)
    const orgId: string = org.body.org_id
    const claim = yield* asOwner(`${apiUrl}/v1/agents/claim`, {
      method: "POST",
      body: JSON.stringify({ provider_key: newAgent().providerKey, org_id: orgId })
    })
    expect(claim.status, JSON.stringify(claim.body)).toBe(200)
    const agentId: string = claim.body.agent_id
    const policy = yield* asOwner(`${apiUrl}/v1/agents/${agentId}/policy`, {
      method: "PUT",
      body: JSON.stringify({
        escalation_triggers: [
          { condition: "tool_matches('transfer_*')", action: "approve", reason: "money moves need a person" }
        ],
        defaults: { unmapped_tool_action: "allow", enforcement_mode: "enforce" }
      })
    })
    expect(policy.status, JSON.stringify(policy.body)).toBe(200)
    const server = yield* asOwner(`${apiUrl}/v1/orgs/${orgId}/mcp-servers`, {
      method: "POST",
      body: JSON.stringify({ name: "bank", url: fake.url })
    })
    expect(server.status, JSON.stringify(server.body)).toBe(201)
    const agentToken = yield* asOwner(`${apiUrl}/v1/agents/${agentId}/mcp-tokens`, { method: "POST" })
    expect(agentToken.status).toBe(201)

    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/${server.body.server_id}`), {
          requestInit: { headers: { "x-candor-agent-token": agentToken.body.token } }
        })
        const connected = new Client({ name: "candor-e2e", version: "1.0.0" })
        await connected.connect(transport)
        return connected
      }),
      (connected) => Effect.promise(() => connected.close())
    )
    const pending = poll(
      asOwner(`${apiUrl}/v1/orgs/${orgId}/approvals?status=pending`),
      (res) => res.status === 200 && res.body.total === 1,
      "one approval pending",
      30_000
    ).pipe(Effect.map((res) => (res.body.approvals as Array<Approval>)[0]!))
    const held = (amount: number) =>
      Effect.promise(() =>
        client.callTool({ name: "transfer_funds", arguments: { amount } }, undefined, { timeout: 60_000 }).then(
          (result) => ({ ok: true as const, result }),
          (error: unknown) => ({ ok: false as const, error: error as { code: number; message: string } })
        )
      ).pipe(Effect.fork)

    // Approved: the server sees the call once, after the decision.
    const first = yield* held(10)
    const approval = yield* pending
    expect(approval).toMatchObject({ tool: "transfer_funds", status: "pending" })
    expect(fake.calls).toEqual([])
    const approved = yield* asOwner(`${apiUrl}/v1/approvals/${approval.approval_id}/approve`, {
      method: "POST",
      body: JSON.stringify({ reason: "ticket 42" })
    })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(yield* first.await.pipe(Effect.flatten)).toMatchObject({
      ok: true,
      result: { content: [{ type: "text", text: "ran transfer_funds" }] }
    })
    expect(fake.calls).toEqual([{ name: "transfer_funds", arguments: { amount: 10 } }])

    // Denied: a JSON-RPC error, and the server never sees it.
    const second = yield* held(1_000_000)
    const denial = yield* pending
    const denied = yield* asOwner(`${apiUrl}/v1/approvals/${denial.approval_id}/deny`, {
      method: "POST",
      body: JSON.stringify({ reason: "too much" })
    })
    expect(denied.status).toBe(200)
    const refused = yield* second.await.pipe(Effect.flatten)
    expect(refused.ok).toBe(false)
    expect(refused.ok ? "" : refused.error.message).toContain("denied by a person")
    expect(fake.calls).toHaveLength(1)

    // Both decisions are on the agent's governance log, with their approver.
    const log = yield* poll(
      asOwner(`${apiUrl}/v1/agents/${agentId}/governance-log`),
      (res) => res.status === 200,
      "the governance log",
      10_000
    )
    const actions = JSON.stringify(log.body)
    expect(actions).toContain("approval.approve")
    expect(actions).toContain("approval.deny")
  })

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("MCP calls held for approval", (it) => {
  it.scoped(
    "embedded default: the gateway thread holds the call, the backend thread records the decision",
    () =>
      Effect.gen(function* () {
        const serve = yield* startServe({ env })
        yield* approveAndDeny(serve.apiUrl, serve.gatewayUrl).pipe(printLogsOnFailure(serve))
      }),
    // A child process on two threads: its start alone takes most of vitest's default 30 s on a loaded machine.
    120_000
  )

  it.scoped.skipIf(skipsWithout("postgres", "nats"))(
    "split deployment: the gateway asks the api and worker over NATS and wakes on the KV signal",
    () =>
      Effect.gen(function* () {
        const { api, gateway, worker } = yield* startSplitDeployment(["worker", "gateway", "api"], env)
        yield* approveAndDeny(api.apiUrl, gateway.gatewayUrl).pipe(printLogsOnFailure(worker, gateway, api))
      }),
    { timeout: 240_000 }
  )
})
