/**
 * The commercial side of the API: plans, promo codes, enterprise contact requests, license
 * activations, and the blog (posts and author records). Seeded by migrations/0003_identity.ts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Agent } from "../../../core/schema/Agent.js"
import * as Schema from "effect/Schema"
import { BlogPost as PublishedBlogPost } from "../../../core/schema/Blog.js"
import { Plan } from "../../../core/schema/Plan.js"
import type { Visibility } from "../../../core/schema/Reputation.js"
import { type Columns, Count, decodeAll, decodeFirst, IsoTimestamp, toCount, toIso } from "../Rows.js"
import { defaultAgentSettings, StoreError, storeError, type AgentSettingsRecord } from "../Store.js"

export interface Promo {
  readonly code: string
  readonly name: string
  readonly discount_percent: number
  readonly discount_amount_cents: number
}

export interface EnterpriseContact {
  readonly id: string
  readonly user_id: string | null
  readonly name: string
  readonly email: string
  readonly company: string
  readonly role: string
  readonly company_size: string
  readonly message: string
}

/** The published post (core/schema/Blog.ts); the store's rows decode into it. */
export type BlogPost = typeof PublishedBlogPost.Type

export class CatalogRepo extends Context.Tag("candor/adapters/store/identity/CatalogRepo")<
  CatalogRepo,
  {
    readonly plans: Effect.Effect<ReadonlyArray<Plan>, StoreError>
    readonly plan: (planId: string) => Effect.Effect<Plan | undefined, StoreError>
    /** The active, unexpired promo with this code (case-insensitive). */
    readonly promo: (code: string, now: Date) => Effect.Effect<Promo | undefined, StoreError>
    readonly putPromo: (promo: Promo) => Effect.Effect<void, StoreError>
    readonly addContact: (contact: EnterpriseContact) => Effect.Effect<void, StoreError>
    /** Records that `instanceId` checked the license now. */
    readonly recordActivation: (
      licenseId: string,
      instanceId: string,
      metadata: unknown
    ) => Effect.Effect<void, StoreError>
    readonly posts: (page: {
      readonly limit: number
      readonly offset: number
      readonly agentId?: string | undefined
    }) => Effect.Effect<ReadonlyArray<BlogPost>, StoreError>
    readonly putPost: (post: BlogPost & { readonly body: string }) => Effect.Effect<void, StoreError>
    /** The agent record of a claimed agent (the blog's author), or undefined when unclaimed. */
    readonly agentRecord: (agentId: string) => Effect.Effect<Agent | undefined, StoreError>
  }
>() {}

/** A `plans` row: the published plan (core/schema/Plan.ts) with the driver's bigint as a number. */
const PlanRow = Schema.Struct({ ...Plan.fields, included_checks: Count })
const decodePlans = decodeAll(PlanRow)
const decodePlan = decodeFirst(PlanRow)

/** A `blog_posts` row: the published post. */
const decodePosts = decodeAll(Schema.Struct({ ...PublishedBlogPost.fields, published_at: IsoTimestamp }))

interface AgentRecordRow {
  readonly agent_id: string
  readonly agent_hash: string
  readonly user_id: string
  readonly email: string | null
  readonly public: boolean | null
  readonly visibility: Visibility
  readonly billing_account_id: string
  readonly settings: Partial<AgentSettingsRecord> | null
  readonly claimed_at: unknown
  readonly created_at: unknown
  readonly last_seen: unknown
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return CatalogRepo.of({
    plans: sql`select * from plans order by sort_order, plan_id`.pipe(Effect.flatMap(decodePlans), storeError("plans")),

    plan: (planId) =>
      sql`select * from plans where plan_id = ${planId}`.pipe(Effect.flatMap(decodePlan), storeError("plan")),

    promo: (code, now) =>
      sql<
        Columns<Promo, "discount_percent" | "discount_amount_cents">
      >`select code, name, discount_percent, discount_amount_cents from promo_codes
          where upper(code) = upper(${code}) and active and (expires_at is null or expires_at > ${now})`.pipe(
        Effect.map((rows) =>
          rows[0] === undefined
            ? undefined
            : {
                code: rows[0].code,
                name: rows[0].name,
                discount_percent: toCount(rows[0].discount_percent),
                discount_amount_cents: toCount(rows[0].discount_amount_cents)
              }
        ),
        storeError("promo")
      ),

    putPromo: (promo) =>
      sql`insert into promo_codes (code, name, discount_percent, discount_amount_cents)
          values (${promo.code}, ${promo.name}, ${promo.discount_percent}, ${promo.discount_amount_cents})
          on conflict (code) do update set name = excluded.name, discount_percent = excluded.discount_percent,
            discount_amount_cents = excluded.discount_amount_cents, active = true`.pipe(
        Effect.asVoid,
        storeError("putPromo")
      ),

    addContact: (c) =>
      sql`insert into enterprise_contacts (id, user_id, name, email, company, role, company_size, message)
          values (${c.id}, ${c.user_id}, ${c.name}, ${c.email}, ${c.company}, ${c.role}, ${c.company_size}, ${c.message})`.pipe(
        Effect.asVoid,
        storeError("addContact")
      ),

    recordActivation: (licenseId, instanceId, metadata) =>
      sql`insert into license_activations (license_id, instance_id, instance_metadata)
          values (${licenseId}, ${instanceId}, ${JSON.stringify(metadata ?? {})}::jsonb)
          on conflict (license_id, instance_id) do update set last_seen = now(),
            instance_metadata = excluded.instance_metadata`.pipe(Effect.asVoid, storeError("recordActivation")),

    posts: ({ agentId, limit, offset }) =>
      (agentId === undefined
        ? sql`select * from blog_posts order by published_at desc, post_id limit ${limit} offset ${offset}`
        : sql`select * from blog_posts where agent_id = ${agentId}
              order by published_at desc, post_id limit ${limit} offset ${offset}`
      ).pipe(Effect.flatMap(decodePosts), storeError("posts")),

    putPost: (post) =>
      sql`insert into blog_posts (post_id, agent_id, title, slug, summary, body, published_at)
          values (${post.post_id}, ${post.agent_id}, ${post.title}, ${post.slug}, ${post.summary}, ${post.body},
            ${post.published_at})
          on conflict (post_id) do update set title = excluded.title, summary = excluded.summary, body = excluded.body`.pipe(
        Effect.asVoid,
        storeError("putPost")
      ),

    agentRecord: (agentId) =>
      sql<AgentRecordRow>`select c.agent_id, c.agent_hash, c.user_id, c.public, c.visibility, c.claimed_at, u.email,
            coalesce(o.billing_account_id, 'ba_' || c.user_id) as billing_account_id,
            a.settings, coalesce(a.created_at, c.claimed_at) as created_at,
            (select max(occurred_at) from checkpoints k where k.agent_id = c.agent_id) as last_seen
          from agent_claims c
          left join users u on u.user_id = c.user_id
          left join orgs o on o.org_id = c.org_id
          left join agents a on a.agent_id = c.agent_id
          where c.agent_id = ${agentId}`.pipe(
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const settings: AgentSettingsRecord = { ...defaultAgentSettings, ...(row.settings ?? {}) }
          return {
            id: row.agent_id,
            agent_hash: row.agent_hash,
            user_id: row.user_id,
            email: row.email ?? null,
            claimed_at: toIso(row.claimed_at),
            last_seen: row.last_seen === null || row.last_seen === undefined ? null : toIso(row.last_seen),
            status: settings.containment?.status ?? "active",
            public: row.public === true,
            visibility: row.visibility,
            aip_enforcement_mode: settings.mode,
            billing_account_id: row.billing_account_id,
            created_at: toIso(row.created_at)
          } satisfies Agent
        }),
        storeError("agentRecord")
      )
  })
})

export const layer: Layer.Layer<CatalogRepo, never, SqlClient.SqlClient> = Layer.effect(CatalogRepo, make)
