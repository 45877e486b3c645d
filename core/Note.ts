/**
 * C2SP signed notes (https://c2sp.org/signed-note) carrying `tlog-checkpoint` bodies
 * (https://c2sp.org/tlog-checkpoint): the signed tree head format that Go's `sumdb/note`, the
 * transparency-dev witnesses and any other standard note verifier already understand.
 *
 * Only Ed25519 (signature type 0x01) is supported. A signed note is
 *
 *     <text, ending in "\n"; it may contain blank lines>
 *     <blank line>
 *     — <key name> <base64(4-byte key hash ‖ 64-byte signature)>
 *     … one line per signature
 *
 * where the signature is over the text bytes (final newline included, blank line excluded), the
 * whole note is valid UTF-8 with no ASCII control character other than newline, and key names are
 * non-empty with no Unicode space and no "+". The key hash is the first four bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key). Verifier keys are written `<name>+<hex hash>+<base64(0x01 ‖ key)>`.
 *
 * Where the specifications leave room, we are strict (each point is tested):
 * - base64 must be canonical (padded, zero padding bits), so one signature has one spelling and a
 *   changed character can never leave a signature valid;
 * - at most 100 signature lines (Go's limit; the C2SP signed-note spec asks for at least 16);
 * - a note with two signatures by the same (name, key hash) is rejected; Go's `note.Open` drops the
 *   repeats instead, but a key signs a text once, so a repeat means the note was tampered with;
 * - checkpoint root hashes must be 32 bytes (SHA-256, RFC 6962) and sizes at most 2^53 - 1 (a JS
 *   number; a log this size is out of reach).
 *
 * Strings here are JavaScript strings: "valid UTF-8" means no lone surrogate (a string decoded
 * from bytes has already replaced invalid sequences with U+FFFD, which then fails the signature).
 */
import { concatBytes, fromBase64, toBase64, toHex, utf8 } from "./Bytes.js"
import { sha256 } from "./Hash.js"
import { isValidPublicKey, type SigningKey, verifySignature } from "./Signing.js"

const SIGNATURE_TYPE_ED25519 = 0x01
const SIGNATURE_PREFIX = "\u2014 " // em dash, space
const MAX_SIGNATURES = 100
const KEY_HASH_LENGTH = 4
const ED25519_SIGNATURE_LENGTH = 64
const ROOT_HASH_LENGTH = 32

// ---------------------------------------------------------------------------------------------
// Text rules

// Matching control characters is the point: a note's text must not carry them.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
/** Unicode White_Space is exactly Go's `unicode.IsSpace`, which `sumdb/note` uses for names. */
const SPACE = /\p{White_Space}/u

/** Valid UTF-8 (no lone surrogate) with no ASCII control character other than newline. */
const isNoteString = (text: string): boolean => !CONTROL.test(text) && !LONE_SURROGATE.test(text)

/** A note text: as above, and ending in a newline. */
const isNoteText = (text: unknown): text is string =>
  typeof text === "string" && text.endsWith("\n") && isNoteString(text)

/** Key names: non-empty, no Unicode space, no "+" (and, being in a note, no control character). */
export const isKeyName = (name: unknown): name is string =>
  typeof name === "string" && name !== "" && !name.includes("+") && !SPACE.test(name) && isNoteString(name)

/** Canonical standard base64: padded, and re-encoding gives the same text (zero padding bits). */
export const fromCanonicalBase64 = (text: string): Uint8Array | undefined => {
  const bytes = fromBase64(text)
  return bytes !== undefined && toBase64(bytes) === text ? bytes : undefined
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

export interface Checkpoint {
  /** Identifies the log; non-empty, one line. */
  readonly origin: string
  /** Number of leaves. */
  readonly size: number
  /** RFC 6962 Merkle root, 32 bytes. */
  readonly root: Uint8Array
  /** Opaque non-empty lines after the root; usually none. */
  readonly extensions: ReadonlyArray<string>
}

const SIZE = /^(?:0|[1-9][0-9]*)$/

const isCheckpointLine = (line: unknown): line is string =>
  typeof line === "string" && line !== "" && !line.includes("\n") && isNoteString(line)

/**
 * The checkpoint body: origin, decimal size, base64 root, extension lines, each ending in "\n".
 * Throws a RangeError for a checkpoint that has no valid body (empty or multi-line origin or
 * extension, size not a safe non-negative integer, root not 32 bytes): a programmer error.
 */
export const formatCheckpoint = (checkpoint: Checkpoint): string => {
  const { origin, size, root, extensions } = checkpoint
  if (!isCheckpointLine(origin)) throw new RangeError("checkpoint origin must be one non-empty line of note text")
  if (!Number.isSafeInteger(size) || size < 0)
    throw new RangeError("checkpoint size must be a non-negative safe integer")
  if (!(root instanceof Uint8Array) || root.length !== ROOT_HASH_LENGTH)
    throw new RangeError("checkpoint root must be 32 bytes")
  if (!extensions.every(isCheckpointLine))
    throw new RangeError("checkpoint extension lines must be non-empty single lines of note text")
  return [origin, String(size), toBase64(root), ...extensions].map((line) => `${line}\n`).join("")
}

/** Parses a checkpoint body (the note text, not the signed note); `undefined` if it is not one. */
export const parseCheckpoint = (body: string): Checkpoint | undefined => {
  if (!isNoteText(body)) return undefined
  const lines = body.slice(0, -1).split("\n")
  const [origin, sizeText, rootText, ...extensions] = lines
  if (origin === undefined || sizeText === undefined || rootText === undefined) return undefined
  if (lines.some((line) => line === "")) return undefined
  if (!SIZE.test(sizeText)) return undefined
  const size = Number(sizeText)
  if (!Number.isSafeInteger(size)) return undefined
  const root = fromCanonicalBase64(rootText)
  if (root === undefined || root.length !== ROOT_HASH_LENGTH) return undefined
  return { origin, size, root, extensions }
}

// ---------------------------------------------------------------------------------------------
// Keys

export interface NoteVerifier {
  readonly name: string
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array
}

/** First four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ 32-byte Ed25519 public key). */
export const noteKeyHash = (name: string, publicKey: Uint8Array): Uint8Array =>
  sha256(concatBytes(utf8(name), Uint8Array.of(0x0a, SIGNATURE_TYPE_ED25519), publicKey)).slice(0, KEY_HASH_LENGTH)

/** `<name>+<8 hex digits>+<base64(0x01 ‖ key)>`. Throws a RangeError for an invalid name or key length (programmer error). */
export const formatVerifierKey = (verifier: NoteVerifier): string => {
  if (!isKeyName(verifier.name)) throw new RangeError(`invalid note key name: ${JSON.stringify(verifier.name)}`)
  if (!(verifier.publicKey instanceof Uint8Array) || verifier.publicKey.length !== 32)
    throw new RangeError("Ed25519 public keys are 32 bytes")
  const keyData = concatBytes(Uint8Array.of(SIGNATURE_TYPE_ED25519), verifier.publicKey)
  return `${verifier.name}+${toHex(noteKeyHash(verifier.name, verifier.publicKey))}+${toBase64(keyData)}`
}

const HASH_HEX = /^[0-9a-fA-F]{8}$/

/**
 * Parses a verifier key as written by Go's `note.NewEd25519VerifierKey` (surrounding whitespace is
 * ignored). `undefined` unless the name is valid, the algorithm is Ed25519, the hash matches the
 * name and key, and the key is one `verifySignature` can accept at all (see core/Signing.ts).
 */
export const parseVerifierKey = (vkey: string): NoteVerifier | undefined => {
  if (typeof vkey !== "string") return undefined
  const text = vkey.trim()
  const first = text.indexOf("+")
  if (first < 0) return undefined
  const name = text.slice(0, first)
  const rest = text.slice(first + 1)
  const second = rest.indexOf("+")
  if (second < 0) return undefined
  const hashHex = rest.slice(0, second)
  const keyData = fromCanonicalBase64(rest.slice(second + 1))
  if (!isKeyName(name) || !HASH_HEX.test(hashHex) || keyData === undefined) return undefined
  if (keyData.length !== 33 || keyData[0] !== SIGNATURE_TYPE_ED25519) return undefined
  const publicKey = keyData.slice(1)
  if (toHex(noteKeyHash(name, publicKey)) !== hashHex.toLowerCase()) return undefined
  if (!isValidPublicKey(publicKey)) return undefined
  return { name, publicKey }
}

// ---------------------------------------------------------------------------------------------
// Notes

export interface NoteSigner {
  readonly name: string
  readonly key: SigningKey
}

export interface NoteSignature {
  readonly name: string
  /** `<name>+<hex key hash>`: how a signature names its key. */
  readonly id: string
  /** The bytes after the 4-byte key hash (for a cosignature: timestamp and signature). */
  readonly signature: Uint8Array
  readonly line: string
}

export interface ParsedNote {
  readonly text: string
  readonly signatures: ReadonlyArray<NoteSignature>
}

/** `<name>+<hex key hash>`: how a signature line names its key. */
export const keyId = (name: string, keyHash: Uint8Array): string => `${name}+${toHex(keyHash)}`

/**
 * Splits a signed note into text and signature lines, with every rule above applied (at most 100
 * lines, canonical base64, no two lines by one (name, key hash)); a string is why it is malformed.
 */
export const parseNote = (note: unknown): ParsedNote | string => {
  if (typeof note !== "string") return "a note must be a string"
  if (!isNoteString(note)) return "a note must be valid UTF-8 with no control characters other than newline"
  // The text ends at the last blank line; signature lines are never empty.
  const split = note.lastIndexOf("\n\n")
  if (split < 0) return "no blank line before the signatures"
  const text = note.slice(0, split + 1)
  const block = note.slice(split + 2)
  if (block === "" || !block.endsWith("\n")) return "the signature block must be non-empty and end in a newline"
  const lines = block.slice(0, -1).split("\n")
  if (lines.length > MAX_SIGNATURES) return `more than ${MAX_SIGNATURES} signatures`
  const signatures: Array<NoteSignature> = []
  const seen = new Set<string>()
  for (const line of lines) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return "a signature line must start with an em dash and a space"
    const rest = line.slice(SIGNATURE_PREFIX.length)
    const space = rest.indexOf(" ")
    if (space < 0) return "a signature line needs a key name and a signature"
    const name = rest.slice(0, space)
    const bytes = fromCanonicalBase64(rest.slice(space + 1))
    if (!isKeyName(name)) return "invalid key name in a signature line"
    if (bytes === undefined || bytes.length <= KEY_HASH_LENGTH) return `invalid signature encoding for ${name}`
    const id = keyId(name, bytes.subarray(0, KEY_HASH_LENGTH))
    if (seen.has(id)) return `duplicate signature by ${id}`
    seen.add(id)
    signatures.push({ name, id, signature: bytes.subarray(KEY_HASH_LENGTH), line })
  }
  return { text, signatures }
}

const signatureLine = (text: string, signer: NoteSigner): { readonly id: string; readonly line: string } => {
  const keyHash = noteKeyHash(signer.name, signer.key.publicKey)
  const signature = signer.key.sign(utf8(text))
  return {
    id: keyId(signer.name, keyHash),
    line: `${SIGNATURE_PREFIX}${signer.name} ${toBase64(concatBytes(keyHash, signature))}`
  }
}

/**
 * Signs `body` (the note text) and returns the signed note. Throws a RangeError if `body` is not a
 * valid note text (must end in "\n", no control character but newline, no lone surrogate) or the
 * signer's name is not a valid key name: both are programmer errors, never input from outside.
 */
export const signNote = (body: string, signer: NoteSigner): string => {
  if (!isNoteText(body))
    throw new RangeError("note text must end in a newline and contain no control characters other than newline")
  if (!isKeyName(signer.name)) throw new RangeError(`invalid note key name: ${JSON.stringify(signer.name)}`)
  return `${body}\n${signatureLine(body, signer).line}\n`
}

/**
 * Adds `signer`'s signature to an existing signed note (a witness cosigning a checkpoint). Any
 * earlier signature by the same key is replaced, as Go's `note.Sign` does. Existing signatures are
 * kept as they are and NOT checked: verify the note with `verifyNote` before cosigning it.
 * `undefined` if the note is malformed, the name is invalid or the note would exceed 100 signatures.
 */
export const addNoteSignature = (note: string, signer: NoteSigner): string | undefined => {
  const parsed = parseNote(note)
  if (typeof parsed === "string" || !isKeyName(signer.name)) return undefined
  const added = signatureLine(parsed.text, signer)
  const kept = parsed.signatures.filter((signature) => signature.id !== added.id).map((signature) => signature.line)
  if (kept.length + 1 > MAX_SIGNATURES) return undefined
  return `${parsed.text}\n${[...kept, added.line].map((line) => `${line}\n`).join("")}`
}

/**
 * Appends signature lines (each `— <name> <base64>`, no newline) to a signed note: how a log adds
 * the witness cosignatures it collected (core/Cosignature.ts) to its own signed checkpoint. The
 * lines are NOT verified here. `undefined` if the result is not a well-formed note: a malformed
 * line, a second line by a (name, key hash) already there, or more than 100 lines in all.
 */
export const appendSignatureLines = (note: string, lines: ReadonlyArray<string>): string | undefined => {
  if (lines.some((line) => typeof line !== "string" || line.includes("\n"))) return undefined
  const appended = `${note}${lines.map((line) => `${line}\n`).join("")}`
  return typeof parseNote(note) === "string" || typeof parseNote(appended) === "string" ? undefined : appended
}

export type NoteVerification =
  | { readonly ok: true; readonly body: string; readonly verifiedBy: ReadonlyArray<string> }
  | { readonly ok: false; readonly error: string }

const fail = (error: string): NoteVerification => ({ ok: false, error })

/**
 * Verifies a signed note against known keys, following the C2SP signed-note rules: signatures by unknown
 * (name, key hash) pairs are ignored; a signature by a known key must verify or the whole note is
 * rejected; at least one known signature must verify. `verifiedBy` lists the names of the keys
 * whose signatures verified, in note order. Never throws.
 */
export const verifyNote = (note: string, verifiers: ReadonlyArray<NoteVerifier>): NoteVerification => {
  try {
    const parsed = parseNote(note)
    if (typeof parsed === "string") return fail(`malformed note: ${parsed}`)
    // Index the known keys; two different keys with the same name and hash are ambiguous.
    const known = new Map<string, Uint8Array | "ambiguous">()
    for (const verifier of verifiers) {
      const id = keyId(verifier.name, noteKeyHash(verifier.name, verifier.publicKey))
      const previous = known.get(id)
      if (previous === undefined) known.set(id, verifier.publicKey)
      else if (previous !== "ambiguous" && toHex(previous) !== toHex(verifier.publicKey)) known.set(id, "ambiguous")
    }
    const message = utf8(parsed.text)
    const verifiedBy: Array<string> = []
    for (const signature of parsed.signatures) {
      const publicKey = known.get(signature.id)
      if (publicKey === undefined) continue
      if (publicKey === "ambiguous") return fail(`ambiguous verifier key ${signature.id}`)
      if (
        signature.signature.length !== ED25519_SIGNATURE_LENGTH ||
        !verifySignature(publicKey, message, signature.signature)
      ) {
        return fail(`invalid signature by ${signature.id}`)
      }
      verifiedBy.push(signature.name)
    }
    if (verifiedBy.length === 0) return fail("no signature by a known key")
    return { ok: true, body: parsed.text, verifiedBy }
  } catch (cause) {
    // Only reachable through a malformed verifier object (e.g. a missing name); still no throw.
    return fail(`cannot verify note: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/**
 * Verifies a signed checkpoint: `verifyNote`, then the body must be a checkpoint and, when given,
 * its origin must equal `expectedOrigin`. Pass only the log's own key(s) as `verifiers` if a witness
 * cosignature alone must not be enough. `undefined` on any failure.
 */
export const verifyCheckpointNote = (
  note: string,
  verifiers: ReadonlyArray<NoteVerifier>,
  expectedOrigin?: string
): Checkpoint | undefined => {
  const verified = verifyNote(note, verifiers)
  if (!verified.ok) return undefined
  const checkpoint = parseCheckpoint(verified.body)
  if (checkpoint === undefined) return undefined
  if (expectedOrigin !== undefined && checkpoint.origin !== expectedOrigin) return undefined
  return checkpoint
}
