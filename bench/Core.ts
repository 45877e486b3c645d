/**
 * `npm run bench:core`: throughput of the verification core on one core, beside a baseline measured
 * in the same run (this shared 2-core machine is noisy, so ratios are steadier than absolute rates).
 *
 * Baselines: merkletreejs `addLeaf`, which rebuilds the whole tree on every append as Mnemom's
 * service does (it measured 28.6 ms per append at 10k leaves), and @noble/ed25519 for signatures.
 */
import * as ed from "@noble/ed25519"
import canonicalize from "canonicalize"
import { sha512 } from "@noble/hashes/sha2.js"
import { MerkleTree } from "merkletreejs"
import { createHash, randomBytes } from "node:crypto"
import { attest, emptyLogState } from "../core/Attestation.js"
import { type Certificate, signCertificateBody, verifyCertificate } from "../core/Certificate.js"
import { canonicalJson } from "../core/Canonical.js"
import { appendToChain, type ChainEntry, genesisHead } from "../core/Chain.js"
import { sha256 } from "../core/Hash.js"
import { leafHash, MemoryMerkleLog, verifyConsistency, verifyInclusion } from "../core/Merkle.js"
import { generateSigningKey, verifySignaturePortable } from "../core/Signing.js"

ed.hashes.sha512 = sha512

interface Row {
  readonly name: string
  readonly opsPerSec: number
  readonly baseline?: { readonly name: string; readonly opsPerSec: number }
  readonly target?: string
  readonly met?: boolean
}

/** Runs `op` repeatedly for at least `minMs` (after a short warm-up) and returns ops/s. */
const rate = (op: (i: number) => void, minMs = 400, batch = 256): number => {
  for (let i = 0; i < batch; i++) op(i)
  let count = 0
  const start = performance.now()
  let elapsed = 0
  while (elapsed < minMs) {
    for (let i = 0; i < batch; i++) op(count + i)
    count += batch
    elapsed = performance.now() - start
  }
  return (count / elapsed) * 1000
}

const fmt = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(1)

const rows: Array<Row> = []
const HEX64 = "ab".repeat(32)
const key = generateSigningKey()

const entryAt = (position: number): ChainEntry => ({
  agent_id: "agent-bench",
  position,
  checkpoint_id: `ic-00000000-0000-4000-8000-${String(position).padStart(12, "0")}`,
  session_id: "sess-bench",
  card_id: "card-bench",
  timestamp: "2026-11-21T00:00:00.000Z",
  verdict: "review_needed",
  rules_version: "candor-verdict/1",
  concerns_hash: HEX64,
  thinking_block_hash: HEX64,
  card_hash: HEX64,
  values_hash: HEX64,
  analysis_hash: HEX64,
  model: "claude-sonnet-4"
})

// Chain append: canonical JSON of the entry plus one domain-separated SHA-256.
{
  let head = genesisHead("agent-bench")
  rows.push({ name: "chain append", opsPerSec: rate(() => (head = appendToChain(head, entryAt(head.position)).head)) })
}

// Merkle append at growing sizes: the rate must stay flat (O(log n) per append, never a rebuild).
const leaves = Array.from({ length: 4096 }, (_, i) => leafHash(sha256(new Uint8Array([i & 255, i >> 8]))))
const logs = new Map<number, MemoryMerkleLog>()
const rfcTree = (n: number) =>
  new MerkleTree(
    Array.from({ length: n }, (_, i) => Buffer.from(leaves[i % leaves.length]!)),
    (data: Buffer) => createHash("sha256").update(data).digest(),
    { concatenator: (parts: Array<Buffer>) => Buffer.concat([Buffer.from([1]), ...parts]) }
  )
for (const size of [1e3, 1e5, 1e6]) {
  const log = new MemoryMerkleLog()
  for (let i = 0; i < size; i++) log.append(leaves[i % leaves.length]!)
  logs.set(size, log)
  // Appending moves the size on; 0.4 s at ~1M/s adds well under one doubling at 1e5 and 1e6.
  const appendRate = rate(() => log.append(leaves[log.size % leaves.length]!))
  const row: Row = {
    name: `merkle append @ ${fmt(size)} leaves`,
    opsPerSec: appendRate,
    target: "≥ 200k/s",
    met: appendRate >= 200_000
  }
  if (size === 1e3) {
    // Mnemom's approach at 1e4 leaves (a rebuild per append), as merkletreejs does it.
    const tree = rfcTree(10_000)
    const baseline = rate((i) => tree.addLeaf(Buffer.from(leaves[i % leaves.length]!)), 400, 4)
    rows.push({ ...row, baseline: { name: "merkletreejs addLeaf @ 10k (rebuild)", opsPerSec: baseline } })
  } else rows.push(row)
}

// Append plus the new root (what each attested checkpoint needs).
{
  const log = logs.get(1e6)!
  rows.push({
    name: "merkle append + root @ 1M",
    opsPerSec: rate(() => {
      log.append(leaves[log.size % leaves.length]!)
      log.root()
    })
  })
}

// Inclusion proof generation and verification at 1e6 leaves, apart and together.
{
  const log = logs.get(1e6)!
  const size = log.size
  const root = log.root()
  const indexOf = (i: number) => (i * 7919) % size
  const proofs = Array.from({ length: 1024 }, (_, i) => log.inclusionProof(indexOf(i), size))
  const verify = (i: number, proof: ReadonlyArray<Uint8Array>) => {
    const index = indexOf(i)
    if (!verifyInclusion({ leafIndex: index, treeSize: size, leafHash: leaves[index % leaves.length]!, proof, root })) {
      throw new Error("proof did not verify")
    }
  }
  rows.push({ name: "inclusion proof generation @ 1M", opsPerSec: rate((i) => log.inclusionProof(indexOf(i), size)) })
  rows.push({ name: "inclusion proof verification @ 1M", opsPerSec: rate((i) => verify(i % 1024, proofs[i % 1024]!)) })
  const r = rate((i) => verify(i, log.inclusionProof(indexOf(i), size)))
  rows.push({ name: "inclusion proof + verify @ 1M", opsPerSec: r, target: "≥ 50k/s", met: r >= 50_000 })
  const c = rate(
    (i) => {
      const size1 = 1 + ((i * 104729) % (size - 1))
      const proof = log.consistencyProof(size1, size)
      if (!verifyConsistency({ size1, size2: size, proof, root1: log.root(size1), root2: root }))
        throw new Error("inconsistent")
    },
    400,
    16
  )
  rows.push({ name: "consistency proof + verify @ 1M (old root rebuilt each time)", opsPerSec: c })
}

// Certificates: one full attestation (verdict, chain, Merkle frontier, sign), then verification.
const CONCERNS = [
  {
    category: "undeclared_intent" as const,
    severity: "medium" as const,
    description: "acts beyond the stated task",
    relevant_conscience_value: null
  }
]
let logState = emptyLogState("agent-bench")
const attestNext = (): Certificate => {
  const entry = entryAt(logState.head.position)
  const result = attest(
    logState,
    {
      certificate_id: `cert-${entry.checkpoint_id.slice(3)}`,
      issued_at: entry.timestamp,
      subject: {
        checkpoint_id: entry.checkpoint_id,
        agent_id: entry.agent_id,
        session_id: entry.session_id,
        card_id: entry.card_id,
        timestamp: entry.timestamp
      },
      claims: {
        concerns: CONCERNS,
        boundary_values: ["boundary-no-deception"],
        reasoning_summary: "one medium concern",
        analysis_model: "rules",
        extraction_confidence: 1
      },
      input_commitments: {
        thinking_block_hash: HEX64,
        card_hash: HEX64,
        values_hash: HEX64,
        analysis_hash: HEX64,
        model: entry.model
      }
    },
    key
  )
  logState = result.state
  return result.certificate
}
{
  const r = rate(() => attestNext())
  rows.push({
    name: "full attestation (verdict + chain + merkle + sign)",
    opsPerSec: r,
    target: "< 0.1 ms each",
    met: r >= 10_000
  })
  const body = (({ signature: _signature, ...rest }) => rest)(attestNext())
  const signRate = rate(() => signCertificateBody(body, key))
  const message = randomBytes(400)
  const seed = key.exportSeed()
  const nobleSign = rate(() => ed.sign(message, seed), 400, 16)
  rows.push({
    name: "certificate sign (JCS + Ed25519, node:crypto)",
    opsPerSec: signRate,
    baseline: { name: "@noble/ed25519 sign (signature only)", opsPerSec: nobleSign },
    target: "≥ 15k/s",
    met: signRate >= 15_000
  })
  const certificates = Array.from({ length: 64 }, () => attestNext())
  const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)
  const verifyRate = rate((i) => {
    if (!verifyCertificate(certificates[i % certificates.length], { resolveKey }).valid) throw new Error("invalid")
  })
  const signature = key.sign(message)
  const nobleVerify = rate(() => verifySignaturePortable(key.publicKey, message, signature), 400, 16)
  rows.push({
    name: "certificate verify (all layers)",
    opsPerSec: verifyRate,
    baseline: { name: "@noble/ed25519 verify (signature only)", opsPerSec: nobleVerify },
    target: "≥ 5k/s",
    met: verifyRate >= 5_000
  })
}

// Canonical JSON of what a checkpoint's analysis hash covers (core/Commitments.ts `analysisOf`),
// with the realistic shape's sizes: a concern quoting the thinking, a summary, 15 values in force.
{
  const prose = (n: number) => "The agent weighs the user's request against its values. ".repeat(8).slice(0, n)
  const layer = (type: string, prefix: string) =>
    Array.from({ length: 5 }, (_, i) => ({ type, name: `${prefix}_${i}`, severity: "high" }))
  const analysis = {
    concerns: [
      { category: "prompt_injection", severity: "high", description: prose(120), evidence: prose(300) },
      { category: "value_misalignment", severity: "medium", description: prose(90), evidence: prose(200) }
    ],
    reasoning_summary: prose(400),
    analysis_model: "rules",
    llm_verdict: null,
    synthetic_reason: null,
    conscience_context: {
      values_checked: Array.from({ length: 15 }, (_, i) => `BOUNDARY:value_${i}`),
      conflicts: [],
      supports: ["BOUNDARY:value_1"],
      considerations: [prose(200)],
      consultation_depth: "standard",
      layers: { defaults: layer("BOUNDARY", "d"), organization: layer("FEAR", "o"), agent: layer("BOUNDARY", "a") },
      resolution_mode: "augment"
    }
  }
  if (canonicalJson(analysis) !== canonicalize(analysis)) throw new Error("canonical JSON differs from the package's")
  rows.push({
    name: "canonical JSON (RFC 8785) of a checkpoint's analysis, ~2.4 KB",
    opsPerSec: rate(() => canonicalJson(analysis)),
    baseline: { name: "the canonicalize package", opsPerSec: rate(() => canonicalize(analysis)) }
  })
}

const table = [
  "| operation | ops/s | µs/op | baseline (same run) | ops/s | ratio | target | met |",
  "|---|---:|---:|---|---:|---:|---|---|",
  ...rows
    .map((row) =>
      [
        row.name,
        fmt(row.opsPerSec),
        (1e6 / row.opsPerSec).toFixed(2),
        row.baseline?.name ?? "",
        row.baseline ? fmt(row.baseline.opsPerSec) : "",
        row.baseline
          ? `${(row.opsPerSec / row.baseline.opsPerSec).toFixed(row.opsPerSec < 10 * row.baseline.opsPerSec ? 1 : 0)}×`
          : "",
        row.target ?? "",
        row.met === undefined ? "" : row.met ? "yes" : "NO"
      ].join(" | ")
    )
    .map((line) => `| ${line} |`)
]
console.log(`Node ${process.version}, one core, ${new Date().toISOString()}`)
console.log(table.join("\n"))
