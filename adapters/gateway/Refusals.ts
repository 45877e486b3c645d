/**
 * The answers the gateway gives a request itself, in place of the provider's: the tool policy's
 * 403s (with `X-Policy-Verdict`), a tool result's, and the 429 of more tool results than one
 * request may have judged.
 */
import type { PolicyEvaluation } from "../../core/Policy.js"
import { jsonResponse } from "./Inspector.js"
import { MAX_JUDGED_PER_REQUEST } from "./ToolResultScreening.js"

/** The response header carrying the tool policy's verdict for the request. */
export const POLICY_VERDICT_HEADER = "x-policy-verdict"

/** `X-Policy-Verdict` of a request whose declared tools pass (in any mode). */
export const POLICY_PASSED: Readonly<Record<string, string>> = { [POLICY_VERDICT_HEADER]: "pass" }

/** The 403 of a request whose tools the policy forbids, in `enforce` mode. */
export const policyBlocked = (evaluation: PolicyEvaluation) => {
  const tools = [...new Set(evaluation.violations.map((v) => v.tool))]
  const response = jsonResponse(403, {
    error: `blocked by Candor tool policy: ${tools.join(", ")}`,
    policy_verdict: { mode: "enforce", ...evaluation }
  })
  return { ...response, headers: { ...response.headers, [POLICY_VERDICT_HEADER]: "fail" } }
}

/** The 403 of a request whose body is not JSON, so its tools cannot be checked, under `fail_open: false` in `enforce`. */
export const policyUnreadable = (() => {
  const response = jsonResponse(403, {
    error:
      "blocked by Candor tool policy: the request's tools cannot be read (not JSON) and the policy does not fail open",
    policy_verdict: { mode: "enforce", verdict: "fail", violations: [], warnings: [], tools_evaluated: 0 }
  })
  return { ...response, headers: { ...response.headers, [POLICY_VERDICT_HEADER]: "fail" } }
})()

/** The 403 of a held answer calling a tool the enforcing policy forbids: the client never gets the call. */
export const answerPolicyBlocked = (tools: ReadonlyArray<string>, checkpointId: string) =>
  jsonResponse(403, {
    error: `blocked by Candor tool policy: the answer calls ${tools.join(", ")}`,
    checkpoint_id: checkpointId
  })

/** The enforcement record's reason for a request refused for one of its tool results. */
export const TOOL_RESULT_BLOCK_REASON = "tool_result_violation"

/** The 403 of a request carrying a tool result judged a boundary violation, in `enforce`. */
export const toolResultBlocked = (checkpointId: string) =>
  jsonResponse(403, {
    error: "blocked by Candor: a tool result in the request was judged a boundary violation (prompt injection)",
    checkpoint_id: checkpointId
  })

/** More tool results not yet judged than one request may have judged, in `enforce`: retried, the next ones are judged. */
export const toolResultsOverCap = (left: number) => {
  const response = jsonResponse(429, {
    error: `the request carries ${left} more tool results not yet judged than the ${MAX_JUDGED_PER_REQUEST} Candor judges per request; retry to have the next ones judged`
  })
  return { ...response, headers: { ...response.headers, "retry-after": "1" } }
}
