/**
 * Which feature a frame of a CPU profile works for: the map from source files (and libraries) to the
 * features of a checkpoint's path, used by the profile summariser (bench/pipeline/Profile.ts) and
 * documented in docs/benchmarks.md ("CPU by feature").
 *
 * A sample is attributed by walking its stack from the innermost frame outwards: the first frame of
 * a *feature* module decides. *Shared* modules (hashing, bytes, JSON canonicalization, the schema
 * definitions, Effect, the SQL, NATS and HTTP clients, Node's internals and builtins) are looked
 * through, so the cost of a SHA-256 or of a SQL round trip goes to the feature that asked for it;
 * only when no feature frame is on the stack (a socket's data handler parsing a PostgreSQL result,
 * the Effect scheduler resuming fibers) does the innermost shared module's own bucket take it.
 * Effect's Schema modules are a feature of their own (decoding and validation), whoever calls them.
 */

/** What a frame is: a feature's own code, or shared code that passes the sample to its caller. */
export type FrameClass =
  | { readonly kind: "feature"; readonly feature: string }
  | { readonly kind: "shared"; readonly fallback: string }
  | { readonly kind: "idle" }
  | { readonly kind: "root" }

export const FEATURES = {
  attestation: "attestation & signing (certificates, chain, Merkle, tree heads)",
  commit: "commit SQL (checkpoints, traces, chain heads, Merkle nodes, outbox rows)",
  sealing: "sealing (stored fields encrypted)",
  actors: "agent actors & batching (decode, order, group commit)",
  context: "agent context (card, conscience values, policy, claims)",
  drift: "drift, session windows, containment",
  reputation: "reputation (tallies, scores, history, trust, teams)",
  coherence: "coherence inputs",
  proofs: "proof sampling & proof jobs",
  feed: "feed (catalogue events, outbox relay to NATS, index)",
  webhooks: "webhook fan-out & delivery",
  relays: "outbox relays, decisions, dead letters",
  governance: "governance log",
  bus: "bus (JetStream publish/consume, leases, agent-state KV)",
  metrics: "metrics",
  schema: "schema decoding & validation (Effect Schema)",
  proxy: "gateway: HTTP proxying (admission, headers, upstream)",
  answer: "gateway: answer reading (provider JSON, extraction)",
  judge: "gateway: judge (rules) & verdict",
  policy: "gateway: tool policy",
  publish: "gateway: event building & publishing",
  stream: "API: live stream",
  api: "API: other handlers & auth",
  effect: "Effect runtime (fibers, scheduling; no feature frame on the stack)",
  sql: "SQL client (driver; no feature frame on the stack)",
  nats: "NATS client (no feature frame on the stack)",
  http: "HTTP client/server libraries (no feature frame on the stack)",
  node: "Node runtime & I/O (no feature frame on the stack)",
  gc: "garbage collection",
  native: "V8/native, unattributed ((program))",
  loader: "module loading (Node, tsx)",
  otherApp: "other Candor code",
  otherLib: "other libraries"
} as const

const F = FEATURES

/** Feature modules by path prefix from the repository root, first match wins. */
const APP: ReadonlyArray<readonly [string, string]> = [
  // Shared utilities are handled first (below, SHARED_APP); these are the features.
  ["streams/AttestEvent.ts", F.attestation],
  ["core/Attestation.ts", F.attestation],
  ["core/Signing.ts", F.attestation],
  ["core/Chain.ts", F.attestation],
  ["core/Merkle", F.attestation],
  ["core/Certificate.ts", F.attestation],
  ["core/Note.ts", F.attestation],
  ["core/Commitments.ts", F.attestation],
  ["core/Cosignature.ts", F.attestation],
  ["adapters/keys/", F.attestation],
  ["adapters/store/SqlCommit.ts", F.commit],
  ["adapters/store/CommitPlan.ts", F.commit],
  ["adapters/store/SqlStore.ts", F.commit],
  ["adapters/store/SqlMerkle.ts", F.commit],
  ["adapters/store/Store.ts", F.commit],
  ["adapters/store/StoreDatabase.ts", F.commit],
  ["adapters/store/Unavailable.ts", F.commit],
  ["streams/GroupCommit.ts", F.commit],
  ["adapters/store/SealedFields.ts", F.sealing],
  ["core/SecretBox.ts", F.sealing],
  ["streams/AgentActors.ts", F.actors],
  ["streams/CommitDeliveries.ts", F.actors],
  ["streams/PartitionWorkers.ts", F.actors],
  ["streams/AgentContext.ts", F.context],
  ["streams/AgentStateRestore.ts", F.context],
  ["core/ConscienceResolution.ts", F.context],
  ["adapters/store/OrgConscienceRepo.ts", F.context],
  ["adapters/store/PolicyRepo.ts", F.context],
  ["adapters/store/AgentQueries.ts", F.context],
  ["adapters/store/identity/", F.context],
  ["adapters/bus/AgentState.ts", F.context],
  ["adapters/bus/KvAgentState.ts", F.context],
  ["core/Drift", F.drift],
  ["core/TraceFeatures.ts", F.drift],
  ["core/Containment.ts", F.drift],
  ["core/Risk", F.drift],
  ["adapters/store/RiskRepo.ts", F.drift],
  ["adapters/store/KeyContainmentRepo.ts", F.drift],
  ["streams/Reputation", F.reputation],
  ["services/TeamReputation", F.reputation],
  ["services/ReputationRecompute", F.reputation],
  ["core/Reputation", F.reputation],
  ["core/TeamReputation", F.reputation],
  ["core/TrustPropagation.ts", F.reputation],
  ["core/Reclassification.ts", F.reputation],
  ["adapters/store/ReputationRepo.ts", F.reputation],
  ["adapters/store/TrustEdgeRepo.ts", F.reputation],
  ["adapters/store/ReclassificationRepo.ts", F.reputation],
  ["adapters/store/TeamRepo.ts", F.reputation],
  ["adapters/store/TeamReputationRepo.ts", F.reputation],
  ["adapters/store/MemberScores.ts", F.reputation],
  ["core/Coherence.ts", F.coherence],
  ["adapters/store/CoherenceInputs.ts", F.coherence],
  ["adapters/store/CoherenceRepo.ts", F.coherence],
  ["core/ProofSampling.ts", F.proofs],
  ["streams/ProofJobs.ts", F.proofs],
  ["streams/ProverWorkers.ts", F.proofs],
  ["adapters/store/ProofRepo.ts", F.proofs],
  ["prover/", F.proofs],
  ["streams/Events.ts", F.feed],
  ["adapters/store/EventOutbox.ts", F.feed],
  ["core/Events.ts", F.feed],
  ["core/EventData.ts", F.feed],
  ["adapters/bus/EventFeed", F.feed],
  ["streams/WebhookFanOut.ts", F.webhooks],
  ["streams/WebhookDelivery.ts", F.webhooks],
  ["adapters/webhooks/", F.webhooks],
  ["adapters/store/WebhookRepo.ts", F.webhooks],
  ["adapters/store/WebhookDeliveryOutbox.ts", F.webhooks],
  ["adapters/store/WebhookSecrets.ts", F.webhooks],
  ["core/WebhookSignature.ts", F.webhooks],
  ["streams/OutboxRelay.ts", F.relays],
  ["streams/Decisions.ts", F.relays],
  ["services/Containment.ts", F.relays],
  ["streams/DeadLetters.ts", F.relays],
  ["adapters/store/DeadLetterRepo.ts", F.relays],
  ["adapters/store/GovernanceLog.ts", F.governance],
  ["core/Governance.ts", F.governance],
  ["adapters/bus/", F.bus],
  ["adapters/metrics/", F.metrics],
  ["adapters/gateway/AnswerReading.ts", F.answer],
  ["adapters/providers/Identity.ts", F.proxy],
  ["adapters/providers/", F.answer],
  ["adapters/gateway/Judging.ts", F.judge],
  ["adapters/gateway/UnanalysedJudgement.ts", F.judge],
  ["adapters/gateway/FairQueue.ts", F.judge],
  ["adapters/analysis/", F.judge],
  ["core/Verdict.ts", F.judge],
  ["core/FailurePolicy.ts", F.judge],
  ["core/Policy.ts", F.policy],
  ["core/GlobSet.ts", F.policy],
  ["adapters/gateway/PolicySlices.ts", F.policy],
  ["adapters/gateway/Tool", F.policy],
  ["adapters/gateway/ResponseEvent.ts", F.publish],
  ["adapters/gateway/EventPublisher.ts", F.publish],
  ["adapters/gateway/GatewayInspector.ts", F.publish],
  ["adapters/gateway/RequestPath.ts", F.publish],
  ["adapters/gateway/RequestDecision.ts", F.publish],
  ["adapters/gateway/Refusals.ts", F.publish],
  ["adapters/gateway/NudgeInjection.ts", F.publish],
  ["adapters/gateway/ResponsePath.ts", F.publish],
  ["adapters/gateway/Analysis.ts", F.publish],
  ["adapters/gateway/Publication.ts", F.publish],
  ["adapters/gateway/Inspector.ts", F.publish],
  ["adapters/gateway/Recording.ts", F.publish],
  ["adapters/gateway/", F.proxy],
  ["adapters/http/", F.proxy],
  ["src/api/handlers/Stream.ts", F.stream],
  ["core/StreamFilter.ts", F.stream],
  ["src/", F.api],
  ["adapters/auth/", F.api]
]

/** Candor's own shared modules: looked through, with a bucket of their own when no feature called them. */
const SHARED_APP: ReadonlyArray<readonly [string, string]> = [
  ["core/Bytes.ts", F.attestation],
  ["core/Hash.ts", F.attestation],
  ["core/Canonical.ts", F.attestation],
  ["core/schema/", F.schema],
  ["adapters/store/Rows.ts", F.sql],
  ["adapters/store/Transaction.ts", F.sql],
  ["bin/", F.loader]
]

/** Libraries (the package under node_modules): all shared, with their bucket. */
const libraryBucket = (pkg: string, file: string): FrameClass => {
  if (pkg === "effect")
    return /\/(?:Schema|ParseResult|SchemaAST)\.js$|\/schema\//.test(file)
      ? { kind: "feature", feature: F.schema }
      : { kind: "shared", fallback: F.effect }
  if (
    pkg === "@effect/sql" ||
    pkg === "@effect/sql-pg" ||
    pkg === "pg" ||
    pkg.startsWith("pg-") ||
    pkg.startsWith("postgres-")
  )
    return { kind: "shared", fallback: F.sql }
  if (pkg.startsWith("@nats-io/")) return { kind: "shared", fallback: F.nats }
  if (pkg === "undici" || pkg.startsWith("@effect/platform")) return { kind: "shared", fallback: F.http }
  if (pkg === "canonicalize" || pkg.startsWith("@noble/")) return { kind: "shared", fallback: F.attestation }
  if (pkg === "tsx" || pkg === "esbuild" || pkg === "get-tsconfig") return { kind: "shared", fallback: F.loader }
  return { kind: "shared", fallback: F.otherLib }
}

/** The class of a frame, from its `callFrame.url` (file:// URLs of this checkout, node: URLs, or empty) and name. */
export const classifyFrame = (url: string, functionName: string, root: string): FrameClass => {
  if (url === "") {
    if (functionName === "(idle)") return { kind: "idle" }
    if (functionName === "(root)") return { kind: "root" }
    if (functionName === "(garbage collector)") return { kind: "feature", feature: F.gc }
    if (functionName === "(program)") return { kind: "feature", feature: F.native }
    // Builtins (JSON.parse, Array.prototype.sort, …): their caller's.
    return { kind: "shared", fallback: F.node }
  }
  if (url.startsWith("node:internal/modules/")) return { kind: "shared", fallback: F.loader }
  if (url.startsWith("node:")) return { kind: "shared", fallback: F.node }
  const path = url.startsWith("file://") ? decodeURIComponent(url.slice("file://".length)) : url
  const modules = path.lastIndexOf("/node_modules/")
  if (modules >= 0) {
    const rest = path.slice(modules + "/node_modules/".length).split("/")
    const pkg = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
    return libraryBucket(pkg, path)
  }
  if (!path.startsWith(root)) return { kind: "shared", fallback: F.otherLib }
  const relative = path.slice(root.length)
  for (const [prefix, fallback] of SHARED_APP) if (relative.startsWith(prefix)) return { kind: "shared", fallback }
  for (const [prefix, feature] of APP) if (relative.startsWith(prefix)) return { kind: "feature", feature }
  return { kind: "feature", feature: F.otherApp }
}
