/**
 * The dead-letter repository's cases (issue 24), run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL: a dead letter is stored once by its id;
 * every page is newest recorded first, bounded, and reached from the last one's cursor; an
 * organization's pages hold only the dead letters naming the agents claimed into it (as claimed
 * now), through the same cursor; rows decode on both drivers (int8 as a string on `pg`, a number on PGlite).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import { DeadLetterRepo } from "../../../adapters/store/DeadLetterRepo.js"
import type { DeadLetter } from "../../../core/schema/DeadLetter.js"

const entry = (n: number, agentId: string | null): DeadLetter => ({
  dead_letter_id: `dl-${String(n).padStart(32, "0")}`,
  subject: agentId === null ? "candor.events.x" : `candor.events.${n % 4}.${agentId}`,
  agent_id: agentId,
  reason: n % 2 === 0 ? "not a gateway event: session_id (Refinement)" : "delivered 5 times",
  deliveries: n % 2 === 0 ? 1 : 5,
  dead_lettered_at: new Date(Date.UTC(2026, 10, 1, 0, 0, n)).toISOString()
})

/** Every page of `read`, following `next_before`. */
const allPages = (read: (before: string | undefined) => ReturnType<DeadLetterRepo["Type"]["page"]>) =>
  Effect.gen(function* () {
    const pages: Array<ReadonlyArray<DeadLetter>> = []
    let before: string | undefined
    for (;;) {
      const page = yield* read(before)
      pages.push(page.dead_letters)
      if (page.next_before === null) return pages
      before = page.next_before
    }
  })

export const deadLetterPages = Effect.gen(function* () {
  const repo = yield* DeadLetterRepo
  const sql = yield* SqlClient.SqlClient
  yield* sql`insert into orgs (org_id, name, slug, billing_account_id, owner_user_id)
    values ('org_dl', 'D', 'dl', 'ba_dl', 'user-dl'), ('org_dl_other', 'O', 'dl-other', 'ba_o', 'user-o')`.pipe(
    Effect.orDie
  )
  yield* sql`insert into agent_claims (agent_id, agent_hash, user_id, org_id)
    values ('agt-dl1', 'h1', 'user-dl', 'org_dl'), ('agt-dl2', 'h2', 'user-dl', 'org_dl'),
      ('agt-dl3', 'h3', 'user-o', 'org_dl_other'), ('agt-dl4', 'h4', 'user-dl', null)`.pipe(Effect.orDie)
  const agents = ["agt-dl1", "agt-dl2", "agt-dl3", "agt-dl4", "agt-unclaimed", null]
  const entries = Array.from({ length: 12 }, (_, n) => entry(n, agents[n % agents.length]!))
  for (const e of entries) expect(yield* repo.insert(e)).toBe(true)
  // A notice recorded again (a redelivery after a crash) is the same row.
  expect(yield* repo.insert(entries[0]!)).toBe(false)
  expect(yield* repo.insert({ ...entries[0]!, reason: "changed" })).toBe(false)

  const newestFirst = [...entries].reverse()
  const everyPage = yield* allPages((before) => repo.page({ limit: 5, before }))
  expect(everyPage.map((page) => page.length)).toEqual([5, 5, 2])
  expect(everyPage.flat()).toEqual(newestFirst)

  const ours = newestFirst.filter((e) => e.agent_id === "agt-dl1" || e.agent_id === "agt-dl2")
  expect(ours).toHaveLength(4)
  const orgPages = yield* allPages((before) => repo.orgPage("org_dl", { limit: 3, before }))
  expect(orgPages.map((page) => page.length)).toEqual([3, 1])
  expect(orgPages.flat()).toEqual(ours)
  expect(yield* repo.orgPage("org_dl", { limit: 4 })).toEqual({ dead_letters: ours, next_before: null })
  expect((yield* repo.orgPage("org_dl_other", { limit: 10 })).dead_letters.map((e) => e.agent_id)).toEqual([
    "agt-dl3",
    "agt-dl3"
  ])
  expect(yield* repo.orgPage("org_none", { limit: 10 })).toEqual({ dead_letters: [], next_before: null })

  // As claimed now: an agent moved into the organization brings its dead letters with it.
  yield* sql`update agent_claims set org_id = 'org_dl' where agent_id = 'agt-dl4'`.pipe(Effect.orDie)
  expect((yield* repo.orgPage("org_dl", { limit: 100 })).dead_letters).toHaveLength(6)
  expect(yield* repo.orgOfAgent("agt-dl1")).toBe("org_dl")
  expect(yield* repo.orgOfAgent("agt-unclaimed")).toBeNull()
})
