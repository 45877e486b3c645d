/**
 * A certificate checked in the browser, layer by layer, with core/'s own verifiers (the code
 * `candor verify` runs) and the prover's verdict-proof verifier, bundled for the browser (Node's
 * modules mapped to ../platform/). Loaded on demand by the verify page: this module and what it
 * imports are their own chunk.
 *
 * The only inputs from the network are public: the signing keys (`GET /v1/keys`) and the signed tree
 * head of the certificate's tree size (`GET /v1/checkpoints/{id}/inclusion-proof?tree_size=N`). The
 * certificate itself is never sent anywhere.
 */
import { type Certificate, keyResolverFromKeys, verifyCertificate } from "../../../core/Certificate.js"
import { fromBase64 } from "../../../core/Bytes.js"
import type { NoteVerifier } from "../../../core/Note.js"
import { isValidPublicKey } from "../../../core/Signing.js"
import { verifyVerdictProof } from "../../../prover/VerdictProof.js"

export type LayerKey = "format" | "signature" | "chain" | "merkle" | "tree_head" | "verdict" | "verdict_proof"
export type LayerStatus = "pass" | "fail" | "absent" | "skipped"

export interface LayerResult {
  readonly key: LayerKey
  readonly label: string
  readonly status: LayerStatus
  readonly detail: string
}

export interface PublishedKey {
  readonly key_id: string
  readonly public_key: string
}

/** What the page fetches for the check: public data only. */
export interface PublicSources {
  readonly keys: () => Promise<ReadonlyArray<PublishedKey>>
  /** The signed tree head note of the agent's log at `treeSize`. */
  readonly treeHead: (checkpointId: string, treeSize: number) => Promise<string>
}

export interface BrowserVerification {
  readonly valid: boolean
  readonly layers: ReadonlyArray<LayerResult>
  readonly summary: { readonly checkpointId?: string; readonly agentId?: string; readonly verdict?: string }
}

const LABELS: Record<LayerKey, string> = {
  format: "Well-formed certificate",
  signature: "Signature by a published key",
  chain: "Chain link",
  merkle: "Merkle inclusion",
  tree_head: "Signed tree head",
  verdict: "Verdict rule",
  verdict_proof: "Verdict proof (STARK)"
}

const layer = (key: LayerKey, status: LayerStatus, detail: string): LayerResult => ({
  key,
  label: LABELS[key],
  status,
  detail
})

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The fields the fetches need, read defensively: the input is whatever was pasted. */
const peek = (input: unknown) => {
  const cert = (typeof input === "object" && input !== null ? input : {}) as {
    subject?: { checkpoint_id?: unknown; agent_id?: unknown }
    merkle?: { tree_size?: unknown }
    claims?: { verdict?: unknown }
  }
  const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined)
  return {
    checkpointId: str(cert.subject?.checkpoint_id),
    agentId: str(cert.subject?.agent_id),
    verdict: str(cert.claims?.verdict),
    treeSize: typeof cert.merkle?.tree_size === "number" ? cert.merkle.tree_size : undefined
  }
}

/** The listed keys, trusted under the note's origin when that origin is the certificate's agent's log. */
const treeHeadTrust = (note: string, keys: ReadonlyArray<PublishedKey>, agentId: string) => {
  const end = note.indexOf("\n")
  const origin = end > 0 ? note.slice(0, end) : undefined
  if (origin === undefined) return "the signed tree head has no origin line"
  if (!origin.endsWith(`/agents/${agentId}`)) return `the signed tree head is for log ${origin}, not agent ${agentId}`
  const verifiers = keys.flatMap((key): Array<NoteVerifier> => {
    const publicKey = fromBase64(key.public_key)
    return publicKey !== undefined && isValidPublicKey(publicKey) ? [{ name: origin, publicKey }] : []
  })
  return { note, origin, verifiers }
}

const errorFor = (errors: ReadonlyArray<string>, prefix: string): string =>
  errors
    .find((error) => error.startsWith(`${prefix}:`))
    ?.slice(prefix.length + 1)
    .trim() ?? "does not verify"

/** Checks `input` (parsed JSON) layer by layer; never throws (a failed fetch fails its layer). */
export const verifyInBrowser = async (input: unknown, sources: PublicSources): Promise<BrowserVerification> => {
  const seen = peek(input)
  const summary = {
    ...(seen.checkpointId === undefined ? {} : { checkpointId: seen.checkpointId }),
    ...(seen.agentId === undefined ? {} : { agentId: seen.agentId }),
    ...(seen.verdict === undefined ? {} : { verdict: seen.verdict })
  }
  let keys: ReadonlyArray<PublishedKey>
  try {
    keys = await sources.keys()
  } catch (error) {
    return {
      valid: false,
      summary,
      layers: [layer("signature", "fail", `the published keys could not be fetched: ${reasonOf(error)}`)]
    }
  }
  const resolveKey = keyResolverFromKeys(keys)
  const report = verifyCertificate(input, { resolveKey, verifyVerdictProof })
  const malformed = report.errors.find((error) => error.startsWith("malformed certificate"))
  if (malformed !== undefined) {
    return {
      valid: false,
      summary,
      layers: [
        layer("format", "fail", malformed.replace(/^malformed certificate: /, "")),
        ...(["signature", "chain", "merkle", "tree_head", "verdict", "verdict_proof"] as const).map((key) =>
          layer(key, "skipped", "not checked: the certificate is malformed")
        )
      ]
    }
  }
  const cert = input as Certificate
  const { checks, errors } = report

  // The tree head: the certificate's root must be the one the log signed at that size.
  let treeHead: LayerResult
  if (!checks.merkle) {
    treeHead = layer("tree_head", "skipped", "not checked: the inclusion proof already fails")
  } else {
    try {
      const note = await sources.treeHead(cert.subject.checkpoint_id, cert.merkle.tree_size)
      const trust = treeHeadTrust(note, keys, cert.subject.agent_id)
      if (typeof trust === "string") {
        treeHead = layer("tree_head", "fail", trust)
      } else {
        const against = verifyCertificate(input, { resolveKey, treeHead: trust })
        treeHead = against.checks.merkle
          ? layer("tree_head", "pass", `signed under ${trust.origin} at size ${cert.merkle.tree_size}, same root`)
          : layer("tree_head", "fail", errorFor(against.errors, "merkle"))
      }
    } catch (error) {
      treeHead = layer("tree_head", "fail", `the signed tree head could not be fetched: ${reasonOf(error)}`)
    }
  }

  const proof = cert.verdict_proof as { security?: { proven_bits?: number; conjectured_bits?: number } } | null
  const layers: Array<LayerResult> = [
    layer("format", "pass", `certificate ${cert.certificate_id}`),
    checks.signature
      ? layer("signature", "pass", `Ed25519, key ${cert.key_id}`)
      : layer("signature", "fail", errorFor(errors, "signature")),
    checks.chain
      ? layer("chain", "pass", `position ${cert.chain.position}, hash ${cert.chain.hash.slice(0, 16)}…`)
      : layer("chain", "fail", errorFor(errors, "chain")),
    checks.merkle
      ? layer("merkle", "pass", `leaf ${cert.merkle.leaf_index} of ${cert.merkle.tree_size}`)
      : layer("merkle", "fail", errorFor(errors, "merkle")),
    treeHead,
    checks.verdict
      ? layer("verdict", "pass", `${cert.claims.verdict} follows from the concerns (${cert.claims.rules_version})`)
      : layer("verdict", "fail", errorFor(errors, "verdict")),
    checks.verdict_proof === null
      ? layer("verdict_proof", "absent", "no proof attached (proofs are sampled; an owner may ask for one)")
      : checks.verdict_proof
        ? layer(
            "verdict_proof",
            "pass",
            `STARK, ${proof?.security?.proven_bits}-bit proven / ${proof?.security?.conjectured_bits}-bit conjectured security`
          )
        : layer("verdict_proof", "fail", errorFor(errors, "verdict_proof"))
  ]
  return { valid: layers.every((result) => result.status === "pass" || result.status === "absent"), layers, summary }
}
