/**
 * `BENCH_SHAPE=realistic|bare` (default `realistic`): what the deployment and its traffic look like,
 * for every row of `npm run bench:pipeline` (issue 25).
 *
 * - realistic: what users run. The `rules` judge; BENCH_ORGS (20) organizations, each with five
 *   conscience values, a 50-rule tool policy and one webhook endpoint subscribed to `verdict.*`
 *   (receivers on loopback answering 200), their agents (a row's agent count spread over them: 20 ×
 *   10 by default) all claimed by an owner, each with an Alignment Card and five values of its own
 *   (beside the nine built-in defaults); one unfiltered live stream client on `GET /v1/stream`;
 *   answers of ~600 characters of thinking, a text block and a tool call (Anthropic JSON), one in
 *   ten carrying a prompt injection (`boundary_violation`) and one in ten judged `review_needed`;
 *   proof jobs sampled as in production (every violation and 10% of the rest). Set up through the
 *   public API as an operator would (bench/pipeline/Operator.ts).
 * - bare: the bench as it was before: unclaimed agents, no card, values, policy, webhooks or stream,
 *   short clear answers.
 *
 * With `realistic`, every row also runs `bare` in the same run, printed beside it with the ratio
 * realistic / bare (the 2-core machine is too noisy to compare runs); `bare` runs it alone, and
 * BENCH_BASELINE=0 runs `realistic` without its baseline (a 10-minute soak need not run twice).
 */
import { positive } from "./Settings.js"

export type Shape = "realistic" | "bare"

const chosen: Shape = process.env.BENCH_SHAPE === "bare" ? "bare" : "realistic"

if (process.env.BENCH_SHAPE !== undefined && !["realistic", "bare"].includes(process.env.BENCH_SHAPE))
  throw new Error(`BENCH_SHAPE must be realistic or bare, got ${JSON.stringify(process.env.BENCH_SHAPE)}`)

export const shapeSettings = {
  /** The shape asked for. */
  shape: chosen,
  /** The shapes each row runs, in order: the one asked for, then its baseline. */
  shapes: (chosen === "realistic" && process.env.BENCH_BASELINE !== "0"
    ? ["realistic", "bare"]
    : [chosen]) as ReadonlyArray<Shape>,
  /** Organizations of the realistic shape; a row's agents are spread over them. */
  organizations: positive("BENCH_ORGS", 20),
  /**
   * CPU profiles (`--cpu-prof`) of the gateway, worker and API processes, for the CPU by feature:
   * on unless BENCH_PROFILE=0 (sampling costs a few percent of each profiled process's CPU).
   */
  profile: process.env.BENCH_PROFILE !== "0"
} as const
