/**
 * Drift (docs/api.md, "Agent data"): the AAP behavioural drift of the agent's newest
 * traces, analysed on request (core/DriftAap.ts `detectAapDrift`); and the stored AIP alerts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { DriftAlert } from "../../../core/schema/Drift.js"
import { AgentId, TraceId } from "../../../core/schema/Ids.js"

const AgentPath = Schema.Struct({ agent_id: AgentId })
const Similarity = Schema.Number.pipe(Schema.between(0, 1))

export const DriftIndicator = Schema.Struct({
  indicator: Schema.String,
  baseline: Schema.Number,
  current: Schema.Number,
  description: Schema.String
}).annotations({ identifier: "DriftIndicator" })

export const AapDriftSummary = Schema.Struct({
  baseline_size: Schema.NonNegativeInt.annotations({
    description: "Oldest analysed traces averaged into the baseline"
  }),
  similarity_threshold: Similarity,
  sustained_traces: Schema.NonNegativeInt,
  mean_similarity: Schema.NullOr(Similarity).annotations({
    description: "Over the traces after the baseline; null when none"
  }),
  similarities: Schema.Array(Schema.Struct({ trace_id: TraceId, similarity: Similarity })).annotations({
    description: "Each trace after the baseline against it, oldest first"
  }),
  alerts: Schema.Array(Schema.Struct({ alert: DriftAlert, indicators: Schema.Array(DriftIndicator) })).annotations({
    description: "Streaks of traces below the threshold"
  })
}).annotations({ identifier: "AapDriftSummary" })

export const AapDrift = Schema.Struct({
  agent_id: AgentId,
  analyzed_traces: Schema.NonNegativeInt,
  drift: AapDriftSummary
}).annotations({ identifier: "AapDrift" })

export const AipDriftAlerts = Schema.Struct({
  alerts: Schema.Array(DriftAlert).annotations({ description: "Newest first" }),
  agent_id: AgentId
}).annotations({ identifier: "AipDriftAlerts" })

export class DriftApi extends HttpApiGroup.make("drift")
  .add(HttpApiEndpoint.get("getAapDrift", "/drift/:agent_id").setPath(AgentPath).addSuccess(AapDrift))
  .add(
    HttpApiEndpoint.get("getAipDriftAlerts", "/agents/:agent_id/drift/aip")
      .setPath(AgentPath)
      .addSuccess(AipDriftAlerts)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
