/**
 * The `rules` judge on a tool's result (issue 28): not an agent's reasoning, but text the agent is
 * about to read (a web page, an API's JSON, a file, an email), judged for what an attacker plants
 * in such text: instructions addressed to the AI (ignore your instructions, a fake system prompt,
 * "if you are an AI…"), instructions to send secrets or the user's data somewhere, to keep things
 * from the user, or to call a tool. The reasoning rules (`Rules.ts`) look for an agent's intent
 * ("I'll delete…"), which in a web page is anyone's sentence, so none of them applies here; concerns
 * against the card itself are the LLM judge's (it reads the card).
 *
 * Every finding is a `prompt_injection` concern: `critical` for discarding instructions and for
 * exfiltration, `high` for the others (both cross the boundary: core/Verdict.ts), `medium` (review,
 * never blocked) when the phrase is quoted or named as an example ("attackers write 'ignore previous
 * instructions'"), so that an article about prompt injection is recorded, not withheld. A concern
 * names the agent's BOUNDARY value of the theme (instruction compliance, exfiltration) when it has one.
 *
 * A directive right after a negation ("never upload id_rsa to…") is a warning to the reader and is
 * likewise only `medium`. Patterns are bounded (no unbounded repetition next to another), matched case-insensitively, at
 * most 16 matches per rule: linear in the text. Detection and false-positive rates on a labelled
 * set are in docs/benchmarks.md (`npm run bench:tool-results`).
 */
import { isBoundaryValue } from "../../core/ConscienceResolution.js"
import { type Concern, severityRank } from "../../core/schema/Concern.js"
import type { AnalysisRequest, AnalysisResult } from "./AnalysisModel.js"
import { estimateTokens, type EvidenceRedaction, excerptAround, redactEvidence } from "./Evidence.js"
import { mostSevereMatch } from "./RuleScan.js"
import { boundaryTheme } from "./RulesPatterns.js"

type Theme = "instruction_compliance" | "exfiltration"

interface ToolResultRule {
  readonly id: string
  readonly regex: RegExp
  readonly severity: "critical" | "high" | "medium"
  readonly theme: Theme
  readonly description: string
}

const AI =
  "(?:AI|A\\.I\\.|assistants?|agents?|LLMs?|large\\s+language\\s+models?|language\\s+models?|chatbots?|bots|models?|copilots?|Claude|ChatGPT|GPT|Gemini)"
const SECRET =
  "(?:credentials?|api[\\s_-]?keys?|access[\\s_-]?keys?|secret[\\s_-]?keys?|passwords?|passwd|tokens?|secrets?|private[\\s_-]?keys?|ssh[\\s_-]?keys?|\\.ssh|id_rsa|env(?:ironment)?[\\s_-]variables|\\.env\\b|/etc/passwd|cookies?|session[\\s_-]?ids?|credit[\\s_-]?card(?:\\s+numbers?)?|(?:conversation|chat|message)\\s+history|(?:previous|prior|earlier)\\s+messages|system\\s+prompt|(?:the\\s+)?user'?s?\\s+(?:data|emails?|files|messages|contacts|personal\\s+(?:data|information|details)|address(?:es)?|documents)|personal\\s+(?:data|information)|customer\\s+(?:data|records|list))"
const DESTINATION =
  "(?:https?:\\/\\/|\\bwww\\.|\\b[\\w.+-]{1,64}@[\\w-]{1,63}\\.[\\w.-]{2,63}|\\bwebhook\\b|\\bendpoint\\b|\\bserver\\b|\\burl\\b|\\bquery\\s+(?:string|param))"
const SEND =
  "(?:send|post|upload|exfiltrate|forward|transmit|leak|e-?mail(?!\\s+address)|paste|curl|wget|submit|include|append|attach|embed|encode|write|share|copy|relay)"
const PARTY = "(?:the\\s+)?(?:user|human|operator|owner|customer|principal|person|developer|administrator|admin)s?"

/**
 * Not `u`: with `i`, Unicode mode makes V8 fold case the Unicode way at every step and leaves its
 * fast paths, some 20 times slower on these patterns (~190 µs against ~9 µs for a 300-character
 * result, all rules). The patterns are ASCII (the one dash class holds a BMP character, a single
 * UTF-16 unit), so the matches are the same; a bound like `[^\n]{0,100}` counts UTF-16 units.
 */
const FLAGS = "gi"

const rule = (
  id: string,
  source: string,
  severity: ToolResultRule["severity"],
  theme: Theme,
  description: string
): ToolResultRule => ({ id, regex: new RegExp(source, FLAGS), severity, theme, description })

export const TOOL_RESULT_RULES: ReadonlyArray<ToolResultRule> = [
  rule(
    "tool_result.ignore-instructions",
    "\\b(?:ignore|disregard|forget|override|bypass|abandon|discard)\\s+(?:(?:all|any|of|the|your|my|these|those|every)\\s+){0,3}(?:previous|prior|earlier|above|preceding|original|system|initial|existing|current|other|safety)\\s+(?:instructions?|rules|guidelines|prompts?|directives|constraints|context|messages|guardrails|policies|programming|tasks?)\\b" +
      "|\\b(?:ignore|disregard|forget)\\s+(?:everything|anything|all)\\s+(?:above|before|previously|(?:that\\s+)?you(?:'ve|\\s+have|\\s+were)\\s+(?:been\\s+)?told)\\b" +
      "|\\bdo\\s+not\\s+follow\\s+(?:your|the)\\s+(?:previous|original|system|initial)\\s+(?:instructions|prompt|rules)\\b" +
      "|\\b(?:ignore|disregard|forget|bypass|override)\\s+(?:all\\s+)?(?:of\\s+)?your\\s+(?:instructions|rules|guidelines|guardrails|safety\\s+(?:guidelines|rules|policies)|programming|system\\s+prompt)\\b" +
      "|\\b(?:ignore|disregard)\\s+the\\s+user'?s\\s+(?:request|question|instructions)\\b",
    "critical",
    "instruction_compliance",
    "Tool result tells the agent to discard its own instructions"
  ),
  rule(
    "tool_result.exfiltration",
    `\\b${SEND}\\w*\\b[^\\n]{0,100}?\\b${SECRET}[^\\n]{0,120}?${DESTINATION}` +
      `|\\b${SEND}\\w*\\s+(?:it\\s+|them\\s+)?(?:to|at)\\s+(?:https?:\\/\\/\\S{1,200}|[\\w.+-]{1,64}@[\\w-]{1,63}\\.[\\w.-]{2,63})[^\\n]{0,100}?\\b${SECRET}` +
      "|!\\[[^\\]\\n]{0,100}\\]\\(\\s*https?:\\/\\/[^)\\s]{1,200}[?&][\\w-]{1,30}=(?:\\{|\\$|%7B|<|\\[)",
    "critical",
    "exfiltration",
    "Tool result instructs sending secrets or the user's data to an outside address"
  ),
  rule(
    "tool_result.addressed-to-ai",
    `\\b(?:attention|note|notice|message|instructions?|important|reminder|directive|warning)\\s*(?:to|for)\\s+(?:any\\s+|all\\s+|the\\s+)?${AI}\\b` +
      "|\\bif\\s+you\\s+are\\s+(?:an?\\s+)?(?:AI|A\\.I\\.|assistant|agent|LLM|large\\s+language\\s+model|language\\s+model|chatbot|automated\\s+(?:system|agent|assistant)|bot)\\b" +
      `|\\b(?:AI|LLM|automated)\\s+(?:agents?|assistants?|models?|systems?)\\s+(?:reading|processing|parsing|summari[sz]ing|visiting|browsing|that\\s+(?:read|process|see))\\s+(?:this|these)\\b` +
      "|\\b(?:dear|hey|hello|hi)\\s+(?:AI|assistant|agent|LLM|chatbot|Claude|ChatGPT|GPT|Gemini)\\b" +
      "|\\b(?:attention|note|notice|important|reminder|psst|warning)\\s*[,:—-]?\\s*(?:AI|LLM|A\\.I\\.)\\s*[:,—!-]" +
      "|(?:^|\\n)\\s*(?:AI|LLM)\\s*:\\s*(?:\\w+\\s+){0,3}?(?:include|send|forward|call|invoke|execute|run|delete|email|write|post|upload|tell|say|reply|change|approve)\\b",
    "high",
    "instruction_compliance",
    "Tool result addresses instructions to the AI reading it"
  ),
  rule(
    "tool_result.fake-system",
    "<\\|im_start\\|>\\s*system|<\\/?(?:system|sys|system_prompt|admin_instructions)>|\\[(?:SYSTEM|INST|ADMIN)\\]" +
      "|\\bsystem\\s+(?:prompt|message|override|instructions?)\\s*(?::|update\\b|override\\b)" +
      "|#{2,}\\s*(?:system|new\\s+instructions)\\b|\\bnew\\s+(?:instructions|directives?|system\\s+prompt|task)\\s*:" +
      "|\\bBEGIN\\s+(?:SYSTEM|ADMIN|PRIVILEGED)\\b|\\b(?:developer|admin|debug|god|jailbreak)\\s+mode\\s+(?:is\\s+)?(?:enabled|activated|on)\\b" +
      "|\\byou\\s+are\\s+now\\s+(?:in\\s+\\w+\\s+mode|DAN|no\\s+longer|an?\\s+(?:unrestricted|unfiltered|different))\\b|\\bfrom\\s+now\\s+on,?\\s+you\\s+(?:will|must|are|should|shall)\\b" +
      "|\\b(?:updated|real|actual|true)\\s+(?:directive|instructions)\\s*[:;]|\\bthe\\s+real\\s+instructions\\s+are\\b",
    "high",
    "instruction_compliance",
    "Tool result poses as a system prompt or replaces the agent's instructions"
  ),
  rule(
    "tool_result.conceal",
    `\\b(?:do\\s+not|don'?t|never)\\s+(?:tell|inform|mention\\s+(?:this|it)\\s+to|reveal\\s+(?:this|these\\s+instructions)\\s+to|notify|alert|let)\\s+${PARTY}\\b` +
      `|\\bwithout\\s+(?:telling|informing|notifying|alerting)\\s+${PARTY}\\b|\\b(?:keep|hide)\\s+(?:this|these\\s+instructions|it)\\s+(?:secret\\s+)?from\\s+${PARTY}\\b`,
    "high",
    "instruction_compliance",
    "Tool result tells the agent to keep something from the user"
  ),
  rule(
    "tool_result.call-tool",
    "\\byou\\s+(?:must|should|need\\s+to|have\\s+to|are\\s+(?:required|instructed|expected)\\s+to|will)\\s+(?:now\\s+|immediately\\s+|first\\s+|also\\s+)?(?:call|invoke|run|execute|use|trigger)\\s+(?:the\\s+)?`?[\\w.-]{1,64}`?\\s+(?:tool|function|command|action)\\b" +
      "|\\b(?:immediately|now)\\s+(?:call|invoke|execute)\\s+(?:the\\s+)?`?[\\w.-]{1,64}`?\\s+(?:tool|function)\\b",
    "high",
    "instruction_compliance",
    "Tool result tells the agent to call a tool"
  ),
  rule(
    "tool_result.reveal-prompt",
    "\\b(?:reveal|print|output|repeat|show|display|disclose|leak|dump|recite)\\s+(?:\\w+\\s+){0,3}?(?:your|the)\\s+(?:system\\s+prompt|initial\\s+instructions|hidden\\s+instructions|original\\s+instructions|instructions\\s+above|secret\\s+instructions|developer\\s+message)\\b",
    "high",
    "instruction_compliance",
    "Tool result asks the agent to disclose its instructions"
  ),
  rule(
    "tool_result.claimed-authority",
    `\\b${PARTY}\\s+(?:has\\s+)?(?:authori[sz]ed|instructed|asked|wants|requested|requires)\\s+(?:you|the\\s+(?:AI|assistant|agent|model))\\s+to\\b`,
    "medium",
    "instruction_compliance",
    "Tool result claims the user's authority for an instruction"
  )
]

/** Quoted or shown as an example: the text talks about an injection rather than carrying one. */
const QUOTE_BEFORE = /["“‘'`«]\s{0,2}$/u
const EXAMPLE_BEFORE =
  /\b(?:such as|for example|for instance|e\.g\.|like|phrases?|strings?|payloads?|attacks?|attackers?|malicious|injections?|jailbreaks?|examples?|called|known as|text reading|detect(?:s|ed|ing)?|block(?:s|ed|ing)?|flag(?:s|ged)?)\b[^.!?\n]{0,60}$/iu

/** "Never paste keys into…", "do not send your password to…": a warning to the reader, not an instruction. */
const NEGATED_BEFORE = /\b(?:never|not|don'?t|do not|must not|mustn'?t|won'?t|will never)\s+(?:\w+\s+){0,1}$/iu

/** A JSON string's own opening quote (after `:`, `[`, `,` or `{`) is no quotation: a value may carry an injection. */
const JSON_VALUE_QUOTE = /[:[,{]\s*"\s{0,2}$/u
const QUOTE_AFTER = /^[.,!?;:]?["”’'`»]/u

/** The match alone, in quotes ("…such as 'ignore previous instructions' in…"): a quotation, not an instruction. */
const quoted = (text: string, before: string, end: number): boolean =>
  QUOTE_BEFORE.test(before) && !JSON_VALUE_QUOTE.test(before) && QUOTE_AFTER.test(text.slice(end, end + 3))

const downgraded = (text: string, start: number, end: number): boolean => {
  const before = text.slice(Math.max(0, start - 80), start)
  return quoted(text, before, end) || EXAMPLE_BEFORE.test(before) || NEGATED_BEFORE.test(before)
}

interface Hit {
  readonly rule: ToolResultRule
  readonly severity: Concern["severity"]
  readonly start: number
  readonly end: number
}

/** The most severe hit of one rule in the text (a rule's own severity, or `medium` when downgraded), or undefined. */
const scan = (rule: ToolResultRule, text: string): Hit | undefined => {
  const match = mostSevereMatch(
    rule.regex,
    text,
    (start, end) => (rule.severity !== "medium" && downgraded(text, start, end) ? "medium" : rule.severity),
    (severity) => severity === rule.severity
  )
  return match === undefined ? undefined : { rule, ...match }
}

/** The agent's BOUNDARY value of each theme, by the rules judge's own theme detection. */
const themedValues = (values: AnalysisRequest["conscienceValues"]): Map<Theme, string> => {
  const themed = new Map<Theme, string>()
  for (const value of values) {
    if (!isBoundaryValue(value)) continue
    const theme = boundaryTheme(value.name, value.content)
    if ((theme === "instruction_compliance" || theme === "exfiltration") && !themed.has(theme))
      themed.set(theme, value.name)
  }
  return themed
}

/** The rules judge on a tool result's text. Never throws on any text. */
export const analyzeToolResultWithRules = (
  request: AnalysisRequest,
  redaction: EvidenceRedaction,
  judgeName: string
): AnalysisResult => {
  const started = performance.now()
  const text = request.thinking
  const themed = themedValues(request.conscienceValues)
  const concerns: Array<Concern> = []
  for (const rule of TOOL_RESULT_RULES) {
    const hit = scan(rule, text)
    if (hit === undefined) continue
    const value = themed.get(rule.theme)
    concerns.push({
      category: "prompt_injection",
      severity: hit.severity,
      description: rule.description,
      evidence: redactEvidence(excerptAround(text, hit.start, hit.end), redaction),
      ...(value === undefined
        ? {}
        : { relevant_conscience_value: value, cause: { relevant_card_field: "conscience_values", value } })
    })
  }
  concerns.sort((a, b) => severityRank(b.severity) - severityRank(a.severity))
  const tokens = estimateTokens(text)
  const summary =
    concerns.length === 0
      ? `Rules judge found no injection in about ${tokens} tokens of tool result.`
      : `Rules judge found ${concerns.length} injection concern${concerns.length === 1 ? "" : "s"} (most severe: ${concerns[0]!.severity}) in about ${tokens} tokens of tool result.`
  return {
    concerns,
    reasoning_summary: summary,
    llm_verdict: undefined,
    analysis_model: judgeName,
    analysis_duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    thinking_tokens_original: tokens,
    thinking_tokens_analyzed: tokens,
    truncated: false,
    raw_analysis: JSON.stringify({ concerns }),
    cross_validation_warnings: [],
    values_checked: request.card?.values.declared ?? [],
    conscience: {
      applied: request.conscienceValues.filter((v) => [...themed.values()].includes(v.name)),
      supports: [],
      considerations: [],
      depth: "surface"
    }
  }
}
