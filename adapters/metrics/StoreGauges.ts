/**
 * Gauges read from the database at scrape time: checkpoints per verdict (from the counters the
 * store keeps, so cheap at any size), outbox backlog and lag per kind (webhooks, prover jobs: the
 * queues behind the actors), and verdict proofs per status.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { Family } from "./Prometheus.js"
import { toCount } from "../store/Rows.js"

/** Counts arrive as bigint or numeric strings depending on the driver: toCount reads either. */
interface OutboxRow {
  readonly kind: string
  readonly pending: unknown
  readonly dead: unknown
  readonly lag: unknown
}

export const storeFamilies: Effect.Effect<ReadonlyArray<Family>, unknown, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const verdicts = yield* sql<{
      readonly verdict: string
      readonly n: unknown
    }>`select verdict, sum(count) as n from checkpoint_counts group by verdict order by verdict`
    const outbox =
      yield* sql<OutboxRow>`select kind, count(*) filter (where not dead) as pending, count(*) filter (where dead) as dead,
      coalesce(extract(epoch from now() - min(due_at) filter (where not dead and due_at <= now())), 0) as lag
    from outbox group by kind order by kind`
    const proofs = yield* sql<{
      readonly status: string
      readonly n: unknown
    }>`select status, count(*) as n from proofs group by status order by status`
    return [
      {
        name: "candor_checkpoints",
        type: "gauge",
        help: "Stored Integrity Checkpoints by verdict",
        samples: verdicts.map((r) => ({
          name: "candor_checkpoints",
          labels: { verdict: r.verdict },
          value: toCount(r.n)
        }))
      },
      {
        name: "candor_outbox_pending",
        type: "gauge",
        help: "Outbox items waiting to be sent, by kind",
        samples: outbox.map((r) => ({
          name: "candor_outbox_pending",
          labels: { kind: r.kind },
          value: toCount(r.pending)
        }))
      },
      {
        name: "candor_outbox_dead",
        type: "gauge",
        help: "Outbox items given up after their last attempt, by kind",
        samples: outbox.map((r) => ({ name: "candor_outbox_dead", labels: { kind: r.kind }, value: toCount(r.dead) }))
      },
      {
        name: "candor_outbox_lag_seconds",
        type: "gauge",
        help: "Age of the oldest due outbox item, by kind (queue lag)",
        samples: outbox.map((r) => ({
          name: "candor_outbox_lag_seconds",
          labels: { kind: r.kind },
          value: Number(r.lag)
        }))
      },
      {
        name: "candor_verdict_proofs",
        type: "gauge",
        help: "Verdict proofs by status",
        samples: proofs.map((r) => ({
          name: "candor_verdict_proofs",
          labels: { status: r.status },
          value: toCount(r.n)
        }))
      }
    ] satisfies ReadonlyArray<Family>
  }
)
