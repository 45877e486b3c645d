/**
 * Identifiers and string primitives shared by every resource schema.
 *
 * Ids are validated plain strings, not brands: every record arrives as JSON and is built from
 * literals in tests and adapters, so brands would add a `make` call at each construction site while
 * the pattern check already happens at every decode boundary.
 */
import { Schema } from "effect"

/**
 * The pattern of `Identifier`, exported for the gateway, which checks `x-candor-session` with it on
 * every request (a regular expression test costs a quarter of a Schema decode there).
 */
export const IDENTIFIER_PATTERN = /^\S{1,256}$/

/** Any id Candor stores or receives: 1 to 256 characters, no whitespace (they appear in URLs and subjects). */
export const Identifier = Schema.String.pipe(
  Schema.pattern(IDENTIFIER_PATTERN, { message: () => "must be 1 to 256 characters without whitespace" })
).annotations({ identifier: "Identifier", description: "An identifier: 1 to 256 characters, no whitespace" })

export const CHECKPOINT_ID_PREFIX = "ic-"
const CHECKPOINT_ID = /^ic-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** `ic-{uuid}` with a lowercase UUID (stricter than Mnemom's, whose synthetic ids were `ic-synthetic-<ms>`). */
export const CheckpointId = Schema.String.pipe(
  Schema.pattern(CHECKPOINT_ID, { message: () => "must be ic-{uuid} with a lowercase UUID" })
).annotations({ identifier: "CheckpointId", description: "Integrity Checkpoint id, `ic-{uuid}`" })

export const AgentId = Identifier.annotations({ identifier: "AgentId", description: "Agent id" })
export const TraceId = Identifier.annotations({ identifier: "TraceId", description: "AP-Trace id" })
export const CardId = Identifier.annotations({ identifier: "CardId", description: "Alignment Card id" })
export const SessionId = Identifier.annotations({ identifier: "SessionId", description: "Session id" })

/**
 * An agent's name under a shared provider key (`x-candor-agent`, the claim's `agent_name`): 1 to 128
 * printable ASCII characters (U+0020 space to U+007E tilde), neither first nor last a space. ASCII
 * because a header carries bytes, not text: a name in UTF-8 would arrive as Latin-1 at the gateway and
 * name another agent than the one claimed through the JSON API. No edge spaces because HTTP strips them.
 */
export const AGENT_NAME_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/

export const AgentName = Schema.String.pipe(
  Schema.pattern(AGENT_NAME_PATTERN, {
    message: () => "must be 1 to 128 printable ASCII characters, not starting or ending with a space"
  })
).annotations({ identifier: "AgentName", description: "x-candor-agent: 1 to 128 printable ASCII characters" })

const HEX32 = /^[0-9a-f]{64}$/

/** 32 bytes as 64 lowercase hex characters: every SHA-256 digest Candor publishes. */
export const Hex32 = Schema.String.pipe(
  Schema.pattern(HEX32, { message: () => "must be 64 lowercase hex characters" })
).annotations({ identifier: "Hex32", description: "32 bytes, 64 lowercase hex characters (SHA-256)" })

/** `thinking_block_hash`: a SHA-256, or `"none"` when the model exposed no thinking (synthetic verdicts). */
export const ThinkingBlockHash = Schema.Union(Hex32, Schema.Literal("none")).annotations({
  identifier: "ThinkingBlockHash",
  description: 'SHA-256 of the thinking block (hex), or "none" when there was none'
})

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Padded standard base64 (RFC 4648 §4), the same alphabet `core/Bytes.ts` decodes. */
export const Base64String = Schema.String.pipe(
  Schema.pattern(BASE64, { message: () => "must be padded standard base64" })
).annotations({ identifier: "Base64String", description: "Padded standard base64 (RFC 4648 §4)" })

export const Ed25519PublicKeyBase64 = Base64String.pipe(
  Schema.length(44, { message: () => "must be a 32-byte Ed25519 public key in base64 (44 characters)" })
).annotations({ identifier: "Ed25519PublicKey", description: "Ed25519 public key, 32 bytes, base64" })

export const Ed25519SignatureBase64 = Base64String.pipe(
  Schema.length(88, { message: () => "must be a 64-byte Ed25519 signature in base64 (88 characters)" })
).annotations({ identifier: "Ed25519Signature", description: "Ed25519 signature, 64 bytes, base64" })

const RFC3339 =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/

/**
 * An RFC 3339 date-time kept as the string it was sent as: timestamps are hashed and signed, so a
 * decode/encode round trip must not reformat them (a `Date` would turn `+02:00` into `Z` and drop
 * precision beyond milliseconds). Compare them with `Date.parse`, never as strings across offsets.
 */
export const DateTimeString = Schema.String.pipe(
  Schema.pattern(RFC3339, {
    message: () => "must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z",
    jsonSchema: { format: "date-time" }
  })
).annotations({
  identifier: "DateTimeString",
  description: "RFC 3339 date-time, e.g. 2026-01-31T12:00:00Z",
  // Generated from dates: the pattern alone would leave property tests filtering random strings forever.
  arbitrary: () => (fc) =>
    fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
      .map((date) => date.toISOString())
})

const ISO8601_LOOSE =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[Tt ](?:[01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:\.\d+)?)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/

/**
 * ISO 8601 date or date-time with optional seconds and offset, for documents other tools write
 * (AAP cards from Python SDKs serialise naive datetimes without an offset; YAML authors write dates).
 */
export const LenientDateTimeString = Schema.String.pipe(
  Schema.pattern(ISO8601_LOOSE, { message: () => "must be an ISO 8601 date or date-time such as 2026-01-31T12:00:00Z" })
).annotations({
  identifier: "LenientDateTimeString",
  description: "ISO 8601 date or date-time",
  arbitrary: () => (fc) =>
    fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
      .map((date) => date.toISOString())
})

/** A JSON object whose members Candor does not interpret (kept as sent). */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  description: "A JSON object"
})

/** Index signature that keeps members a struct does not name, so decode → encode loses nothing. */
export const UnknownMembers = Schema.Record({ key: Schema.String, value: Schema.Unknown })
