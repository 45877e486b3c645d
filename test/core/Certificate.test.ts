import { describe, expect, it } from "@effect/vitest"
import { fromHex, toBase64, toHex } from "../../core/Bytes.js"
import {
  type Certificate,
  concernsHash,
  keyResolverFromKeys,
  signCertificate,
  verifyCertificate
} from "../../core/Certificate.js"
import { appendToChain, type ChainEntry, genesisHead } from "../../core/Chain.js"
import { leafHash, MemoryMerkleLog } from "../../core/Merkle.js"
import { formatCheckpoint, signNote } from "../../core/Note.js"
import { generateSigningKey } from "../../core/Signing.js"

const HEX = (c: string) => c.repeat(64)
const key = generateSigningKey()
const otherKey = generateSigningKey()
const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)
const ORIGIN = "candor.test/agents/agent-1"

const CONCERNS = [
  {
    category: "undeclared_intent" as const,
    severity: "medium" as const,
    description: "plans a side task",
    relevant_conscience_value: null
  },
  {
    category: "value_misalignment" as const,
    severity: "high" as const,
    description: "means to copy the customer table",
    relevant_conscience_value: "boundary-no-data-exfiltration"
  }
]
const COMMITMENTS = {
  thinking_block_hash: HEX("1"),
  card_hash: HEX("2"),
  values_hash: HEX("3"),
  analysis_hash: HEX("4"),
  model: "claude-sonnet-4"
}

/** A log of `n` certificates for one agent, issued the way the actors do it, all proved against the final tree. */
const issue = (n: number) => {
  const log = new MemoryMerkleLog()
  let head = genesisHead("agent-1")
  const links = []
  for (let i = 0; i < n; i++) {
    const timestamp = `2026-11-21T10:00:${String(i).padStart(2, "0")}.000Z`
    const entry: ChainEntry = {
      agent_id: "agent-1",
      position: i,
      checkpoint_id: `ic-00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      session_id: "sess-1",
      card_id: "card-1",
      timestamp,
      verdict: "boundary_violation",
      rules_version: "candor-verdict/1",
      concerns_hash: concernsHash(CONCERNS),
      ...COMMITMENTS
    }
    const step = appendToChain(head, entry)
    head = step.head
    log.append(leafHash(step.head.hash))
    links.push(step.link)
  }
  const certificates = links.map((link, i) =>
    signCertificate(
      {
        certificate_id: `cert-${i}`,
        issued_at: link.entry.timestamp,
        subject: {
          checkpoint_id: link.entry.checkpoint_id,
          agent_id: "agent-1",
          session_id: "sess-1",
          card_id: "card-1",
          timestamp: link.entry.timestamp
        },
        claims: {
          verdict: "boundary_violation",
          concerns: CONCERNS,
          boundary_values: ["boundary-no-data-exfiltration", "boundary-no-deception"],
          reasoning_summary: "intends to exfiltrate data",
          analysis_model: "rules",
          extraction_confidence: 1
        },
        input_commitments: COMMITMENTS,
        chain: { position: i, prev_hash: link.prev_hash, hash: link.hash },
        merkle: {
          leaf_index: i,
          leaf_hash: toHex(leafHash(fromHex(link.hash)!)),
          tree_size: log.size,
          root: toHex(log.root()),
          inclusion_proof: log.inclusionProof(i).map(toHex)
        },
        verdict_proof: null
      },
      key
    )
  )
  return { log, certificates }
}

const { log, certificates } = issue(7)
const cert = certificates[4]!

/** Every leaf path of a JSON value, with a replacement value that differs. */
const mutations = (value: unknown, path: Array<string | number> = []): Array<[string, (root: any) => void]> => {
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => mutations(v, [...path, i]))
  }
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => mutations(v, [...path, k]))
  }
  const mutate = (root: any) => {
    let node = root
    for (const step of path.slice(0, -1)) node = node[step]
    const last = path[path.length - 1]!
    const old = node[last]
    node[last] =
      typeof old === "number"
        ? old === 1
          ? 0.5
          : old + 1
        : typeof old === "string"
          ? /^[0-9a-f]{64}$/.test(old)
            ? (old[0] === "0" ? "1" : "0") + old.slice(1)
            : old.length > 4 && /^[A-Za-z0-9+/]+=*$/.test(old) && old.endsWith("=")
              ? (old[0] === "A" ? "B" : "A") + old.slice(1)
              : old === "boundary_violation"
                ? "review_needed"
                : old === "medium"
                  ? "low"
                  : old === "high"
                    ? "critical"
                    : `${old}x`
          : old === null
            ? "x"
            : !old
  }
  return [[path.join("."), mutate]]
}

describe("integrity certificate", () => {
  it("verifies every certificate of a log, on every layer", () => {
    for (const c of certificates) {
      expect(verifyCertificate(c, { resolveKey })).toEqual({
        valid: true,
        checks: { signature: true, chain: true, merkle: true, verdict: true, verdict_proof: null },
        errors: []
      })
    }
  })

  it("survives a JSON round trip unchanged", () => {
    expect(verifyCertificate(JSON.parse(JSON.stringify(cert)), { resolveKey }).valid).toBe(true)
  })

  const cases = mutations(cert)
  it("has a mutation for every field", () => {
    expect(cases.length).toBeGreaterThan(30)
  })
  for (const [path, mutate] of cases) {
    it(`detects a change to ${path}`, () => {
      const tampered = structuredClone(cert)
      mutate(tampered)
      const result = verifyCertificate(tampered, { resolveKey })
      expect(result.valid).toBe(false)
      expect(result.errors.length).toBeGreaterThan(0)
    })
  }

  it("detects a re-signed lie in each layer separately", () => {
    const resign = (c: Certificate): Certificate => {
      const { signature: _s, key_id: _k, type: _t, version: _v, ...rest } = c
      const { concerns_hash: _h, rules_version: _r, ...claims } = rest.claims
      return signCertificate({ ...rest, claims }, key)
    }
    const lie = resign({ ...cert, claims: { ...cert.claims, verdict: "clear" } })
    expect(verifyCertificate(lie, { resolveKey }).checks).toMatchObject({
      signature: true,
      verdict: false,
      chain: false
    })
    const moved = resign({ ...cert, merkle: { ...cert.merkle, root: HEX("9") } })
    expect(verifyCertificate(moved, { resolveKey }).checks).toMatchObject({
      signature: true,
      chain: true,
      verdict: true,
      merkle: false
    })
    const relinked = resign({ ...cert, chain: { ...cert.chain, prev_hash: HEX("8") } })
    expect(verifyCertificate(relinked, { resolveKey }).checks).toMatchObject({ signature: true, chain: false })
  })

  it("refuses unknown keys and keys whose id is not theirs", () => {
    expect(verifyCertificate(cert, { resolveKey: () => undefined }).checks.signature).toBe(false)
    expect(verifyCertificate(cert, { resolveKey: () => otherKey.publicKey }).checks.signature).toBe(false)
    const fromKeys = keyResolverFromKeys([
      { key_id: key.keyId, public_key: toBase64(key.publicKey) },
      { key_id: key.keyId.replace(/^./, "0"), public_key: toBase64(otherKey.publicKey) }
    ])
    expect(verifyCertificate(cert, { resolveKey: fromKeys }).valid).toBe(true)
  })

  it("checks the Merkle claim against a signed tree head", () => {
    const note = signNote(formatCheckpoint({ origin: ORIGIN, size: log.size, root: log.root(), extensions: [] }), {
      name: ORIGIN,
      key
    })
    const verifiers = [{ name: ORIGIN, publicKey: key.publicKey }]
    expect(verifyCertificate(cert, { resolveKey, treeHead: { note, verifiers, origin: ORIGIN } }).valid).toBe(true)
    const forged = signNote(formatCheckpoint({ origin: ORIGIN, size: log.size, root: log.root(), extensions: [] }), {
      name: ORIGIN,
      key: otherKey
    })
    expect(
      verifyCertificate(cert, { resolveKey, treeHead: { note: forged, verifiers, origin: ORIGIN } }).checks.merkle
    ).toBe(false)
    const older = signNote(formatCheckpoint({ origin: ORIGIN, size: 5, root: log.root(5), extensions: [] }), {
      name: ORIGIN,
      key
    })
    expect(
      verifyCertificate(cert, { resolveKey, treeHead: { note: older, verifiers, origin: ORIGIN } }).checks.merkle
    ).toBe(false)
    expect(
      verifyCertificate(cert, { resolveKey, treeHead: { note, verifiers, origin: "candor.test/agents/agent-2" } })
        .checks.merkle
    ).toBe(false)
  })

  it("reports the verdict proof separately, and never trusts one it cannot check", () => {
    const proved = { ...cert, verdict_proof: { system: "test", proof: "AA==" } }
    expect(verifyCertificate(proved, { resolveKey, verifyVerdictProof: () => true })).toMatchObject({
      valid: true,
      checks: { verdict_proof: true }
    })
    expect(verifyCertificate(proved, { resolveKey, verifyVerdictProof: () => false })).toMatchObject({
      valid: false,
      checks: { verdict_proof: false }
    })
    expect(verifyCertificate(proved, { resolveKey })).toMatchObject({
      valid: false,
      checks: { signature: true, verdict_proof: false }
    })
    const throwing = () => {
      throw new Error("boom")
    }
    expect(verifyCertificate(proved, { resolveKey, verifyVerdictProof: throwing }).valid).toBe(false)
  })

  it("answers malformed input with errors, never an exception", () => {
    for (const bad of [
      null,
      undefined,
      42,
      "cert",
      [],
      {},
      { ...cert, extra: 1 },
      { ...cert, merkle: null },
      { ...cert, chain: { ...cert.chain, position: -1 } }
    ]) {
      const result = verifyCertificate(bad, { resolveKey })
      expect(result.valid).toBe(false)
      expect(result.errors[0]).toMatch(/malformed certificate/)
    }
  })
})
