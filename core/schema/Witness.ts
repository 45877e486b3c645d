/**
 * Witness cosignatures as the API serves them (`GET /v1/agents/{agent_id}/cosignatures`,
 * docs/witnesses.md): each is a C2SP cosignature/v1 line on the agent's signed tree head of that
 * size, verified against the witness's configured key before it was stored. The lines are what a
 * verifier checks; the other fields say what they contain.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString } from "./Ids.js"
import { SignedNote } from "./Certificate.js"

export const WitnessCosignature = Schema.Struct({
  witness: Schema.String.annotations({ description: "The witness's key name" }),
  witness_key: Schema.String.annotations({ description: "`<name>+<hex key hash>`, as the signature line names it" }),
  cosigned_at: DateTimeString.annotations({ description: "The time the witness signed into the cosignature" }),
  timestamp: Schema.NonNegativeInt.annotations({ description: "The same, as the POSIX seconds signed" }),
  line: Schema.String.annotations({ description: "The signature line, `— <name> <base64>`" })
}).annotations({ identifier: "WitnessCosignature" })
export type WitnessCosignature = typeof WitnessCosignature.Type

export const CosignatureList = Schema.Struct({
  agent_id: AgentId,
  tree_size: Schema.NonNegativeInt,
  signed_tree_head: SignedNote.annotations({
    description: "The signed tree head of this size, with the cosignature lines appended"
  }),
  cosignatures: Schema.Array(WitnessCosignature)
}).annotations({
  identifier: "CosignatureList",
  description: "The witness cosignatures stored for one signed tree head of an agent's log"
})
export type CosignatureList = typeof CosignatureList.Type
