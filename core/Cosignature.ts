/**
 * Witness cosignatures (https://c2sp.org/tlog-cosignature, `cosignature/v1`, Ed25519, signature
 * type 0x04) on the signed checkpoints of core/Note.ts, and the messages of the witness protocol
 * (https://c2sp.org/tlog-witness, `add-checkpoint`). Pure: the worker that talks to witnesses is
 * streams/Witnessing.ts, the HTTP edge adapters/witness/WitnessClient.ts.
 *
 * A cosignature is a signed-note signature line on the checkpoint,
 *
 *     — <witness name> base64(key hash(4) ‖ timestamp(8, big-endian) ‖ Ed25519 signature(64))
 *
 * with key hash = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ 32-byte public key)[:4], over the message
 *
 *     cosignature/v1\n
 *     time <timestamp, decimal, no leading zero>\n
 *     <the checkpoint note text: origin, size, root, extension lines, final newline>
 *
 * The timestamp is POSIX seconds: the witness states that, as of then, this is the largest
 * consistent tree it has seen for the origin. Verifier keys are `<name>+<hex hash>+<base64(0x04 ‖ key)>`.
 *
 * Strictness, as in core/Note.ts (each point is tested): canonical base64 only; a type 0x01 key is
 * not accepted as a witness key (Go's transparency-dev/formats converts it; a key given as a
 * witness's is meant to be one); timestamps above 2^53 - 1 are refused (the spec allows 2^63 - 1,
 * far beyond any real clock, and a JS number is exact only up to 2^53); a cosignature by a given
 * witness that does not verify rejects the note, as a signature by a known key does in Note.ts.
 */
import { concatBytes, toBase64, toHex, utf8 } from "./Bytes.js"
import { sha256 } from "./Hash.js"
import { verifyConsistency } from "./Merkle.js"
import {
  appendSignatureLines,
  type Checkpoint,
  fromCanonicalBase64,
  isKeyName,
  keyId,
  parseCheckpoint,
  parseNote
} from "./Note.js"
import { isValidPublicKey, type SigningKey, verifySignature } from "./Signing.js"

export const COSIGNATURE_TYPE = 0x04
const SIGNATURE_PREFIX = "\u2014 "
const KEY_HASH_LENGTH = 4
const TIMESTAMP_LENGTH = 8
const ED25519_SIGNATURE_LENGTH = 64
/** The witness protocol's limit on consistency proof lines. */
export const MAX_PROOF_LINES = 63

// ---------------------------------------------------------------------------------------------
// Keys

/** A witness: its name (usually a schema-less URL) and raw 32-byte Ed25519 public key. */
export interface WitnessKey {
  readonly name: string
  readonly publicKey: Uint8Array
}

/** First four bytes of SHA-256(name ‖ "\n" ‖ 0x04 ‖ 32-byte Ed25519 public key). */
export const cosignatureKeyHash = (name: string, publicKey: Uint8Array): Uint8Array =>
  sha256(concatBytes(utf8(name), Uint8Array.of(0x0a, COSIGNATURE_TYPE), publicKey)).slice(0, KEY_HASH_LENGTH)

/** `<name>+<hex key hash>`: how a cosignature line names the witness key (Note.ts's key id). */
export const witnessKeyId = (witness: WitnessKey): string =>
  keyId(witness.name, cosignatureKeyHash(witness.name, witness.publicKey))

/** `<name>+<8 hex digits>+<base64(0x04 ‖ key)>`. Throws a RangeError for an invalid name or key (programmer error). */
export const formatWitnessKey = (witness: WitnessKey): string => {
  if (!isKeyName(witness.name)) throw new RangeError(`invalid witness name: ${JSON.stringify(witness.name)}`)
  if (!(witness.publicKey instanceof Uint8Array) || witness.publicKey.length !== 32)
    throw new RangeError("Ed25519 public keys are 32 bytes")
  const keyData = concatBytes(Uint8Array.of(COSIGNATURE_TYPE), witness.publicKey)
  return `${witness.name}+${toHex(cosignatureKeyHash(witness.name, witness.publicKey))}+${toBase64(keyData)}`
}

const HASH_HEX = /^[0-9a-fA-F]{8}$/

/**
 * Parses a witness verifier key (surrounding whitespace ignored). A string says why it is not one:
 * the callers (configuration, `candor verify`) show it.
 */
export const parseWitnessKey = (vkey: unknown): WitnessKey | string => {
  if (typeof vkey !== "string") return "a witness key must be a string"
  const text = vkey.trim()
  const [name, hashHex, ...rest] = text.split("+")
  // The base64 may itself contain "+".
  const keyText = rest.join("+")
  if (name === undefined || hashHex === undefined || rest.length === 0)
    return "a witness key is <name>+<key hash>+<base64 key>"
  if (!isKeyName(name)) return `invalid witness name ${JSON.stringify(name)}`
  if (!HASH_HEX.test(hashHex)) return "the key hash must be 8 hex digits"
  const keyData = fromCanonicalBase64(keyText)
  if (keyData === undefined) return "the key is not canonical base64"
  if (keyData[0] !== COSIGNATURE_TYPE)
    return `not a cosignature/v1 key: its type is 0x${(keyData[0] ?? 0).toString(16).padStart(2, "0")}, a witness key is of type 0x04`
  if (keyData.length !== 33) return "an Ed25519 key is 32 bytes"
  const publicKey = keyData.slice(1)
  if (toHex(cosignatureKeyHash(name, publicKey)) !== hashHex.toLowerCase())
    return "the key hash does not match the name and key"
  if (!isValidPublicKey(publicKey)) return "not a usable Ed25519 public key"
  return { name, publicKey }
}

// ---------------------------------------------------------------------------------------------
// Signing and verifying

const isTimestamp = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

/** "cosignature/v1\ntime <timestamp>\n" followed by the checkpoint note text. */
export const cosignedMessage = (body: string, timestamp: number): Uint8Array =>
  utf8(`cosignature/v1\ntime ${timestamp}\n${body}`)

const timestampBytes = (timestamp: number): Uint8Array => {
  const bytes = new Uint8Array(TIMESTAMP_LENGTH)
  new DataView(bytes.buffer).setBigUint64(0, BigInt(timestamp))
  return bytes
}

export interface Cosigner {
  readonly name: string
  readonly key: SigningKey
}

/**
 * The cosignature line (no newline) of `cosigner` on the checkpoint note text `body` at
 * `timestamp` (POSIX seconds). Throws a RangeError when `body` is not a checkpoint, the name is
 * invalid or the timestamp not a safe non-negative integer: programmer errors (a witness signs
 * only what it parsed and checked).
 */
export const cosignLine = (body: string, cosigner: Cosigner, timestamp: number): string => {
  if (parseCheckpoint(body) === undefined) throw new RangeError("a cosignature is on a checkpoint note text")
  if (!isKeyName(cosigner.name)) throw new RangeError(`invalid witness name: ${JSON.stringify(cosigner.name)}`)
  if (!isTimestamp(timestamp)) throw new RangeError("the timestamp must be a safe non-negative integer")
  const keyHash = cosignatureKeyHash(cosigner.name, cosigner.key.publicKey)
  const signature = cosigner.key.sign(cosignedMessage(body, timestamp))
  return `${SIGNATURE_PREFIX}${cosigner.name} ${toBase64(concatBytes(keyHash, timestampBytes(timestamp), signature))}`
}

/** One cosignature by a witness asked for, verified. */
export interface VerifiedCosignature {
  readonly witness: WitnessKey
  /** POSIX seconds, as the witness signed it. */
  readonly timestamp: number
  /** The signature line as it was, without newline. */
  readonly line: string
}

/** The timestamp and Ed25519 signature of a cosignature's bytes after the key hash; undefined if the length or timestamp is wrong. */
const splitCosignature = (bytes: Uint8Array): { timestamp: number; signature: Uint8Array } | undefined => {
  if (bytes.length !== TIMESTAMP_LENGTH + ED25519_SIGNATURE_LENGTH) return undefined
  const big = new DataView(bytes.buffer, bytes.byteOffset, TIMESTAMP_LENGTH).getBigUint64(0)
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
  return { timestamp: Number(big), signature: bytes.subarray(TIMESTAMP_LENGTH) }
}

export type CosignatureVerification =
  | {
      readonly ok: true
      /** The checkpoint note text. */
      readonly body: string
      readonly checkpoint: Checkpoint
      /** The given witnesses that cosigned, in note order. */
      readonly cosignatures: ReadonlyArray<VerifiedCosignature>
    }
  | { readonly ok: false; readonly error: string }

/**
 * Checks the cosignatures of `witnesses` on a signed checkpoint note, by the signed-note rules:
 * lines of other keys (the log's own signature, other witnesses) are ignored; a line of a given
 * witness must verify, or the whole note is rejected. With `notAfter` (POSIX seconds), a
 * cosignature dated later is rejected as from the future. Does NOT check the log's signature: use
 * core/Note.ts's `verifyCheckpointNote` with the log's key for that. Never throws.
 */
export const verifyCosignatures = (
  note: string,
  witnesses: ReadonlyArray<WitnessKey>,
  options: { readonly notAfter?: number | undefined } = {}
): CosignatureVerification => {
  const fail = (error: string): CosignatureVerification => ({ ok: false, error })
  try {
    const parsed = parseNote(note)
    if (typeof parsed === "string") return fail(`malformed note: ${parsed}`)
    const checkpoint = parseCheckpoint(parsed.text)
    if (checkpoint === undefined) return fail("the note is not a checkpoint")
    const known = new Map<string, WitnessKey | "ambiguous">()
    for (const witness of witnesses) {
      const id = witnessKeyId(witness)
      const previous = known.get(id)
      if (previous === undefined) known.set(id, witness)
      else if (previous !== "ambiguous" && toHex(previous.publicKey) !== toHex(witness.publicKey))
        known.set(id, "ambiguous")
    }
    const cosignatures: Array<VerifiedCosignature> = []
    for (const signature of parsed.signatures) {
      const witness = known.get(signature.id)
      if (witness === undefined) continue
      if (witness === "ambiguous") return fail(`ambiguous witness key ${signature.id}`)
      const split = splitCosignature(signature.signature)
      if (
        split === undefined ||
        !verifySignature(witness.publicKey, cosignedMessage(parsed.text, split.timestamp), split.signature)
      ) {
        return fail(`invalid cosignature by ${signature.id}`)
      }
      if (options.notAfter !== undefined && split.timestamp > options.notAfter)
        return fail(`cosignature by ${signature.id} is dated in the future (${split.timestamp})`)
      cosignatures.push({ witness, timestamp: split.timestamp, line: signature.line })
    }
    return { ok: true, body: parsed.text, checkpoint, cosignatures }
  } catch (cause) {
    return fail(`cannot verify cosignatures: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/**
 * `verifyCosignatures`, then at least `quorum` distinct given witnesses must have cosigned (default:
 * all of them). The error names the witnesses missing.
 */
export const verifyWitnessQuorum = (
  note: string,
  witnesses: ReadonlyArray<WitnessKey>,
  quorum: number = witnesses.length,
  options: { readonly notAfter?: number | undefined } = {}
): CosignatureVerification => {
  const verified = verifyCosignatures(note, witnesses, options)
  if (!verified.ok) return verified
  const cosigned = new Set(verified.cosignatures.map((c) => witnessKeyId(c.witness)))
  if (cosigned.size >= quorum) return verified
  const missing = [...new Set(witnesses.map(witnessKeyId))].filter((id) => !cosigned.has(id))
  return {
    ok: false,
    error: `${cosigned.size} of the ${quorum} witness cosignatures required; none by ${missing.join(", ")}`
  }
}

/**
 * Adds cosignature lines to a signed note (Note.ts's `appendSignatureLines`): a line by a key that
 * already signed the note is left out, so adding the same cosignatures twice changes nothing.
 * `undefined` when a line is malformed or the note would exceed 100 signatures.
 */
export const addCosignatures = (note: string, lines: ReadonlyArray<string>): string | undefined => {
  const parsed = parseNote(note)
  if (typeof parsed === "string") return undefined
  const present = new Set(parsed.signatures.map((signature) => signature.line))
  const fresh = [...new Set(lines)].filter((line) => !present.has(line))
  return appendSignatureLines(note, fresh)
}

// ---------------------------------------------------------------------------------------------
// tlog-witness add-checkpoint

export interface AddCheckpointRequest {
  /** The size of the last checkpoint the witness cosigned for this origin (0: none). */
  readonly oldSize: number
  /** RFC 6962 consistency proof from `oldSize` to the checkpoint's size (empty from 0). */
  readonly proof: ReadonlyArray<Uint8Array>
  /** The signed checkpoint note. */
  readonly note: string
}

/**
 * `old <size>\n`, one base64 hash per line, an empty line, the signed checkpoint. Throws a
 * RangeError for a size that is not a safe non-negative integer, a hash not 32 bytes or more than
 * 63 of them (programmer errors: the proof comes from our own log).
 */
export const formatAddCheckpoint = (request: AddCheckpointRequest): string => {
  if (!isTimestamp(request.oldSize)) throw new RangeError("old size must be a safe non-negative integer")
  if (request.proof.length > MAX_PROOF_LINES) throw new RangeError(`at most ${MAX_PROOF_LINES} proof lines`)
  if (request.proof.some((hash) => !(hash instanceof Uint8Array) || hash.length !== 32))
    throw new RangeError("proof hashes are 32 bytes")
  return `old ${request.oldSize}\n${request.proof.map((hash) => `${toBase64(hash)}\n`).join("")}\n${request.note}`
}

const SIZE = /^(?:0|[1-9][0-9]*)$/

const parseSize = (text: string): number | undefined => {
  if (!SIZE.test(text)) return undefined
  const size = Number(text)
  return Number.isSafeInteger(size) ? size : undefined
}

/** The witness's side of `formatAddCheckpoint`: a string says why the body is malformed (a 400). */
export const parseAddCheckpoint = (body: string): AddCheckpointRequest | string => {
  const blank = body.indexOf("\n\n")
  if (blank < 0) return "no empty line after the old size and proof"
  const [oldLine, ...proofLines] = body.slice(0, blank).split("\n")
  if (oldLine === undefined || !oldLine.startsWith("old ")) return 'the first line must be "old <size>"'
  const oldSize = parseSize(oldLine.slice(4))
  if (oldSize === undefined) return "the old size must be a decimal without leading zeros"
  if (proofLines.length > MAX_PROOF_LINES) return `more than ${MAX_PROOF_LINES} consistency proof lines`
  const proof: Array<Uint8Array> = []
  for (const line of proofLines) {
    const hash = fromCanonicalBase64(line)
    if (hash === undefined || hash.length !== 32) return "a consistency proof line must be one base64 SHA-256 hash"
    proof.push(hash)
  }
  return { oldSize, proof, note: body.slice(blank + 2) }
}

/**
 * A 200 answer: one or more signature lines, each ending in a newline. `undefined` if it is not
 * that (empty, no final newline, a line not a well-formed signature line, a key twice).
 */
export const parseCosignatureLines = (body: string): ReadonlyArray<string> | undefined => {
  if (body === "" || !body.endsWith("\n")) return undefined
  const lines = body.slice(0, -1).split("\n")
  // Checked as the signature block of a note: the same rules, once.
  const parsed = parseNote(`x\n\n${body}`)
  return typeof parsed === "string" ? undefined : lines
}

/** A 409's `text/x.tlog.size` body: the witness's latest cosigned size, decimal, and a newline. */
export const parseTlogSize = (body: string): number | undefined =>
  body.endsWith("\n") ? parseSize(body.slice(0, -1)) : undefined

/**
 * What a witness checks of an add-checkpoint before cosigning, given its record of the origin
 * (`undefined`: never cosigned it), as c2sp.org/tlog-witness orders the checks after the
 * signature: old size above the new one (400), old size not its record (409 with its size), a
 * consistency proof that does not verify (422), an equal size with another root (409). `ok` means
 * cosign and record the new checkpoint. For witnesses in tests and for monitors: Candor itself is
 * the log, not a witness.
 */
export const checkAddCheckpoint = (
  request: AddCheckpointRequest,
  checkpoint: Checkpoint,
  record: { readonly size: number; readonly root: Uint8Array } | undefined
):
  | { readonly status: 200 }
  | { readonly status: 400 | 422; readonly error: string }
  | { readonly status: 409; readonly size: number } => {
  const known = record ?? { size: 0, root: new Uint8Array(0) }
  if (request.oldSize > checkpoint.size) return { status: 400, error: "old size is larger than the checkpoint" }
  if (request.oldSize !== known.size) return { status: 409, size: known.size }
  if (request.oldSize === 0) {
    return request.proof.length === 0 ? { status: 200 } : { status: 422, error: "a proof from size 0 must be empty" }
  }
  if (request.oldSize === checkpoint.size) {
    if (toHex(known.root) !== toHex(checkpoint.root)) return { status: 409, size: known.size }
    return request.proof.length === 0 ? { status: 200 } : { status: 422, error: "a proof between equal sizes is empty" }
  }
  const consistent = verifyConsistency({
    size1: known.size,
    size2: checkpoint.size,
    proof: request.proof,
    root1: known.root,
    root2: checkpoint.root
  })
  return consistent ? { status: 200 } : { status: 422, error: "the consistency proof does not verify" }
}
