/**
 * What a verification does not say. A verified trace or a clear verdict checks the agent against
 * its own declarations; it is no safety rating. The sentence is one constant, shown verbatim by every
 * verification response (`disclaimer`), the README, docs/formats.md and the console's verify and
 * public reputation pages, so that no copy of it drifts from the others.
 */
import * as Schema from "effect/Schema"

export const PROTOCOL_DISCLAIMER =
  "A verified trace or a clear verdict means only that the agent's declarations and observable behavior are consistent; it does not mean that the agent is safe or aligned." as const

export const Disclaimer = Schema.Literal(PROTOCOL_DISCLAIMER).annotations({
  identifier: "Disclaimer",
  description: "What a verification does not mean: always this sentence"
})
