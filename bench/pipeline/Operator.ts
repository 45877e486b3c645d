/**
 * The realistic shape's deployment, set up through the public API as an operator and an owner
 * would (docs/api.md): the owner signs in (a JWT of the deployment's AUTH_JWT_SECRET), the operator
 * puts them on the Enterprise plan (its rate limit; the service-role key), and for each organization
 * the owner creates it, adds its five conscience values, its 50-rule tool policy and one webhook
 * endpoint subscribed to `verdict.*` (every `verdict.` type of `GET /v1/webhooks/event-types`: the
 * endpoints take types by name; a receiver on loopback), then claims its agents with the
 * organization's provider key (one `x-candor-agent` name each) while the operator gives each its
 * Alignment Card and five values of its own (the card update is the service-role key's).
 *
 * Every answer is checked: a refused step stops the bench with the API's error.
 */
import { mintToken } from "../../adapters/auth/IdentityTokens.js"
import { AGENT_VALUES, cardFor, ORG_POLICY, ORG_VALUES } from "./RealisticContent.js"

export interface Agent {
  /** Its `x-candor-agent` name. */
  readonly name: string
  readonly agentId: string
}

export interface Organization {
  readonly orgId: string
  /** The provider key its agents call the gateway with. */
  readonly providerKey: string
  readonly agents: ReadonlyArray<Agent>
}

export interface OperatorOptions {
  readonly apiUrl: string
  readonly serviceRoleKey: string
  readonly jwtSecret: string
  readonly organizations: number
  readonly agentsPerOrganization: number
  /** The webhook receiver of the `i`-th organization. */
  readonly receiverUrl: (i: number) => string
  /** Requests in flight while claiming and carding agents. */
  readonly concurrency?: number
}

export const OWNER_ID = "bench-owner"

const call = async (
  url: string,
  credential: string,
  method: string,
  body: unknown,
  expected: ReadonlyArray<number>
): Promise<Record<string, unknown>> => {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    // A shared machine: the API may answer 503 while NATS is slow to take a push; the step is sent again.
    if ((response.status === 503 || response.status === 429) && attempt < 20) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      continue
    }
    if (!expected.includes(response.status))
      throw new Error(`${method} ${new URL(url).pathname} answered ${response.status}: ${text.slice(0, 500)}`)
    return text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
  }
}

/** Runs `tasks` with at most `concurrency` in flight. */
const pooled = async <A>(tasks: ReadonlyArray<() => Promise<A>>, concurrency: number): Promise<Array<A>> => {
  const results: Array<A> = new Array(tasks.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++
        results[i] = await tasks[i]!()
      }
    })
  )
  return results
}

export const setUpOrganizations = async (options: OperatorOptions): Promise<ReadonlyArray<Organization>> => {
  const { apiUrl, serviceRoleKey } = options
  const concurrency = options.concurrency ?? 8
  const owner = await mintToken(options.jwtSecret, {
    sub: OWNER_ID,
    email: "owner@bench.example",
    ttlSeconds: 24 * 3600
  })
  const asOwner = (method: string, path: string, body: unknown, expected: ReadonlyArray<number> = [200, 201]) =>
    call(`${apiUrl}${path}`, owner, method, body, expected)
  const asOperator = (method: string, path: string, body: unknown) =>
    call(`${apiUrl}${path}`, serviceRoleKey, method, body, [200, 201])

  // The first authenticated request makes the user (Free plan); the operator then lifts its rate limit.
  await asOwner("GET", "/v1/console/session", undefined)
  await asOperator("PUT", `/v1/admin/users/${OWNER_ID}`, { plan_id: "enterprise" })

  // `verdict.*`: the webhook API takes event types by name, so every `verdict.` type of the catalogue.
  const catalogue = await asOwner("GET", "/v1/webhooks/event-types", undefined)
  const verdictTypes = (catalogue.event_types as ReadonlyArray<{ readonly type: string }>)
    .map((entry) => entry.type)
    .filter((type) => type.startsWith("verdict."))
  const suffix = Math.random().toString(16).slice(2, 8)
  return pooled(
    Array.from({ length: options.organizations }, (_, i) => async (): Promise<Organization> => {
      const org = await asOwner("POST", "/v1/orgs", { name: `Bench organization ${i}`, slug: `bench-${suffix}-${i}` })
      const orgId = String(org.org_id)
      for (const value of ORG_VALUES) await asOwner("POST", `/v1/orgs/${orgId}/conscience-values`, value)
      await asOwner("PUT", `/v1/orgs/${orgId}/policy`, ORG_POLICY)
      await asOwner("POST", `/v1/orgs/${orgId}/webhooks`, {
        url: options.receiverUrl(i),
        description: "the security team's receiver",
        event_types: verdictTypes
      })
      const providerKey = `sk-ant-bench-${suffix}-org${i}`
      const agents = await pooled(
        Array.from({ length: options.agentsPerOrganization }, (_, j) => async (): Promise<Agent> => {
          const name = `agent-${j}`
          const claim = await asOwner("POST", "/v1/agents/claim", {
            provider_key: providerKey,
            agent_name: name,
            org_id: orgId
          })
          const agentId = String(claim.agent_id)
          await asOperator("PATCH", `/v1/agents/${agentId}/card`, {
            card_json: cardFor(agentId, `card-${agentId.slice(4, 16)}`),
            conscience_values: AGENT_VALUES
          })
          return { name, agentId }
        }),
        Math.max(1, Math.floor(concurrency / 2))
      )
      return { orgId, providerKey, agents }
    }),
    2
  )
}
