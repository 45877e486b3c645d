/**
 * `candor reputation verify <agent_id> --url <api> [--keys keys.json]`: recomputes an agent's published
 * reputation from its public certificates, with core/ and no trust in the server. It fetches
 * `GET /v1/reputation/{id}`, the signing keys (`GET /v1/keys`, unless a pinned listing is given), and
 * the certificates the score names (`computed_over.tree_size`) through the paged
 * `GET /v1/agents/{id}/certificates`; then core/ReputationVerification.ts checks the prefix, the
 * signatures, the chain, the Merkle root and signed tree head, and every published number.
 * Exit codes as `candor verify`: 0 all agree, 1 something does not, 2 bad usage or the server
 * could not be read.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import {
  type ListedKey,
  type ReputationVerificationReport,
  verifyReputation
} from "../../core/ReputationVerification.js"
import { AgentReputation } from "../../core/schema/Reputation.js"
import { VerifyUsageError } from "./Verify.js"

/** The largest page the certificates route serves. */
const PAGE = 1000
const TIMEOUT_MS = 60_000

/** `https://host`, `https://host/` and `https://host/v1` all name the same API. */
export const apiBase = (url: string): string => url.replace(/\/+$/, "").replace(/\/v1$/, "")

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** GET a JSON document; anything but a 2xx answer with JSON is a usage error (exit 2), with the server's reason. */
const getJson = (url: string) => {
  const failed = (reason: string) => new VerifyUsageError({ message: `cannot read ${url}: ${reason}` })
  return Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(TIMEOUT_MS)
      })
      return { status: response.status, ok: response.ok, text: await response.text() }
    },
    catch: (error) => failed(reasonOf(error))
  }).pipe(
    Effect.flatMap(({ ok, status, text }) => {
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return Effect.fail(failed(`HTTP ${status}, not JSON`))
      }
      if (ok) return Effect.succeed(json)
      const error = (json as { error?: unknown } | null)?.error
      return Effect.fail(failed(`HTTP ${status}${typeof error === "string" ? `: ${error}` : ""}`))
    })
  )
}

const keyListing = (json: unknown, source: string): Effect.Effect<ReadonlyArray<ListedKey>, VerifyUsageError> => {
  const keys = Array.isArray(json) ? json : (json as { keys?: unknown } | null)?.keys
  return Array.isArray(keys)
    ? Effect.succeed(keys as ReadonlyArray<ListedKey>)
    : Effect.fail(new VerifyUsageError({ message: `${source} is not a key listing ({"keys": [...]})` }))
}

const readKeys = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError(() => new VerifyUsageError({ message: `cannot read ${path}` })),
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new VerifyUsageError({ message: `${path} is not JSON` })
      })
    ),
    Effect.flatMap((json) => keyListing(json, path))
  )

/** The first `treeSize` certificates, page by page (the route serves at most 1000 at a time). */
const fetchCertificates = (base: string, agentId: string, treeSize: number) =>
  Effect.gen(function* () {
    const certificates: Array<unknown> = []
    let from: number | null = 0
    while (from !== null && certificates.length < treeSize) {
      const url = `${base}/v1/agents/${encodeURIComponent(agentId)}/certificates?from=${from}&limit=${PAGE}`
      const page = (yield* getJson(url)) as { certificates?: unknown; next?: unknown } | null
      if (!Array.isArray(page?.certificates))
        return yield* new VerifyUsageError({ message: `${url} did not answer a page of certificates` })
      certificates.push(...(page.certificates as ReadonlyArray<unknown>))
      const next: unknown = page.next
      // A page that does not move forward would loop forever; the verifier then reports what is missing.
      from = typeof next === "number" && next > from ? next : null
    }
    // The log may have grown since the score was computed: only its prefix counts.
    return certificates.slice(0, treeSize)
  })

const mark = (ok: boolean) => (ok ? "ok" : "FAILED")
const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** The report as a person reads it: each check, then the published and recomputed numbers side by side. */
export const formatReputationReport = (published: AgentReputation, report: ReputationVerificationReport): string => {
  const { checks, recomputed, tally } = report
  const size = published.computed_over.tree_size
  const rows: Array<readonly [string, unknown, unknown]> = [
    ...recomputed.components.map(
      (c) => [c.key, published.components.find((p) => p.key === c.key)?.score, c.score] as const
    ),
    ["score", published.score, recomputed.score],
    ["grade", published.grade, recomputed.grade],
    ["tier", published.tier, recomputed.tier],
    ["is_eligible", published.is_eligible, recomputed.is_eligible],
    ["checkpoint_count", published.checkpoint_count, recomputed.checkpoint_count],
    ["confidence", published.confidence, recomputed.confidence]
  ]
  const line = (name: string, published: unknown, recomputed: unknown) =>
    `  ${name.padEnd(25)}${show(published).padStart(14)}${show(recomputed).padStart(14)}` +
    (show(published) === show(recomputed) ? "" : "  ≠")
  const lines = [
    `Reputation of ${published.agent_id}, computed ${published.computed_at} over ${size} certificates`,
    `  prefix         ${mark(checks.prefix.ok)}  ${size === 0 ? "an empty log" : `positions 0..${size - 1} of the agent's log`}`,
    `  certificates   ${mark(checks.certificates.ok)}  signatures, chain links and verdicts of ${tally.certified}`,
    `  chain          ${mark(checks.chain.ok)}  linked from the agent's genesis`,
    `  merkle         ${mark(checks.merkle.ok)}  root ${report.computed_root}`,
    `  tree head      ${mark(checks.tree_head.ok)}  signed tree head of size ${size}`,
    `  scores         ${mark(checks.scores.ok)}  recomputed at ${published.computed_at}`,
    `  tally: ${tally.certified} certified, ${tally.analysed} analysed (${tally.analysed_clear} clear), ` +
      `${tally.long_sessions} long sessions (${tally.stable_sessions} stable), ` +
      `${tally.violation_sessions.length} sessions with a violation`,
    `  coherence inputs as published: mean pair score ${show(report.coherence.mean_pair_score)}, ` +
      `${report.coherence.peers} peers, trust adjustment ${report.coherence.trust_adjustment}`,
    `  ${"".padEnd(25)}${"published".padStart(14)}${"recomputed".padStart(14)}`,
    ...rows.map(([name, p, r]) => line(name, p, r)),
    report.valid ? "VALID" : "INVALID",
    ...Object.entries(checks).flatMap(([name, check]) => check.errors.map((error) => `  - ${name}: ${error}`))
  ]
  return lines.join("\n")
}

const decodeReputation = Schema.decodeUnknownEither(AgentReputation)

/** Fetches, verifies and prints; `valid` decides the exit code. */
export const verifyPublishedReputation = (options: {
  readonly agentId: string
  readonly url: Option.Option<string>
  readonly keys: Option.Option<string>
}) =>
  Effect.gen(function* () {
    if (Option.isNone(options.url))
      return yield* new VerifyUsageError({ message: "give the API's address with --url <https://…>" })
    const base = apiBase(options.url.value)
    const json = yield* getJson(`${base}/v1/reputation/${encodeURIComponent(options.agentId)}`)
    const decoded = decodeReputation(json)
    if (Either.isLeft(decoded)) {
      yield* Console.log(
        `INVALID\n  - the published reputation does not decode: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
      )
      return { valid: false }
    }
    const published = decoded.right
    if (published.agent_id !== options.agentId) {
      yield* Console.log(`INVALID\n  - the server answered the reputation of ${published.agent_id}`)
      return { valid: false }
    }
    const keys = Option.isSome(options.keys)
      ? yield* readKeys(options.keys.value)
      : yield* Effect.flatMap(getJson(`${base}/v1/keys`), (listing) => keyListing(listing, `${base}/v1/keys`))
    const size = published.computed_over.tree_size
    const certificates = size === 0 ? [] : yield* fetchCertificates(base, published.agent_id, size)
    const report = verifyReputation(published, certificates, published.computed_over.checkpoint, keys)
    yield* Console.log(formatReputationReport(published, report))
    return report
  })

const verify = Command.make(
  "verify",
  {
    agentId: Args.text({ name: "agent_id" }).pipe(Args.withDescription("The agent whose reputation to verify")),
    url: Options.text("url").pipe(
      Options.optional,
      Options.withDescription("The API's address, e.g. https://candor.example (with or without /v1)")
    ),
    keys: Options.file("keys").pipe(
      Options.optional,
      Options.withDescription(
        "Pinned signing keys: a saved GET /v1/keys answer (default: fetched from the same API, trusting it for the keys)"
      )
    )
  },
  (options) =>
    verifyPublishedReputation(options).pipe(
      Effect.map((report) => {
        // 0 only when everything agrees; runMain keeps the code when the program succeeds.
        if (!report.valid) process.exitCode = 1
      }),
      Effect.catchTag("VerifyUsageError", (error) =>
        Effect.zipRight(
          Console.error(`candor reputation verify: ${error.message}`),
          Effect.sync(() => {
            process.exitCode = 2
          })
        )
      )
    )
).pipe(
  Command.withDescription(
    "Recompute an agent's published reputation from its signed certificates and tree head, and compare every number"
  )
)

export const reputationCommand = Command.make("reputation").pipe(
  Command.withDescription("Agent reputation"),
  Command.withSubcommands([verify])
)
