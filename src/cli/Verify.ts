/**
 * `candor verify <certificate.json> [--keys keys.json | --keys-url URL] [--tree-head note.txt]
 * [--certificates certificates.json] [--witness-key <vkey>]… [--witness-quorum N]`: the
 * offline verifier (`candor verify --export <file>` checks an evidence export: ./VerifyExport.ts). Given a governance log entry's inclusion proof instead, it checks the entry against
 * the signed tree head (the proof's, or the one given), and for an `aip.reevaluation` entry given
 * with --certificates, re-derives the verdicts it changed from those certificates. Checks a certificate's signature, chain link, Merkle inclusion (and the signed
 * tree head when given) and its verdict proof with core/ and the prover's verifier: no database, and
 * no network except one fetch of the key listing with `--keys-url`. With `--witness-key`, the signed
 * tree head used (the one given, a governance proof's own, an export's last) must also carry valid
 * cosignatures (c2sp.org/tlog-cosignature) by those witnesses, at least `--witness-quorum` of them
 * (default: all): docs/witnesses.md. Prints a readable report; the exit code is 0 only when the
 * certificate is valid.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { listedKeys, verifyWithKeys } from "../../adapters/keys/Trust.js"
import type { CertificateVerification } from "../../core/Certificate.js"
import { failurePolicyReason, type FailurePolicyClaims } from "../../core/FailurePolicy.js"
import {
  formatWitnessKey,
  parseWitnessKey,
  verifyWitnessQuorum,
  witnessKeyId,
  type WitnessKey
} from "../../core/Cosignature.js"
import { verifyGovernanceEntry } from "../../core/Governance.js"
import { checkReevaluation } from "../../core/Reevaluation.js"
import { IntegrityCertificate } from "../../core/schema/Certificate.js"
import { GovernanceInclusionProof, type GovernanceRecord } from "../../core/schema/Governance.js"
import { AipReevaluationState } from "../../core/schema/Reevaluation.js"
import { verifyVerdictProof } from "../../prover/VerdictProof.js"
import { formatExportReport, verifyExportFile } from "./VerifyExport.js"

export class VerifyUsageError extends Data.TaggedError("VerifyUsageError")<{ readonly message: string }> {}

type KeyListing = ReadonlyArray<{ readonly key_id: string; readonly public_key: string }>

/** `{keys: [...]}` (the `GET /v1/keys` answer, `candor keys list --json`) or a bare array of keys. */
const keysOf = (json: unknown, source: string): Effect.Effect<KeyListing, VerifyUsageError> => {
  const keys = Array.isArray(json) ? json : (json as { keys?: unknown } | null)?.keys
  return Array.isArray(keys)
    ? Effect.succeed(keys as KeyListing)
    : Effect.fail(new VerifyUsageError({ message: `${source} is not a key listing ({"keys": [...]})` }))
}

const parseJson = (text: string, source: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: () => new VerifyUsageError({ message: `${source} is not JSON` })
  })

const readText = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError(() => new VerifyUsageError({ message: `cannot read ${path}` }))
  )

const fetchKeys = (url: string) => {
  const failed = (reason: string) => new VerifyUsageError({ message: `cannot fetch keys from ${url}: ${reason}` })
  const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
  return Effect.tryPromise({
    try: () => fetch(url, { headers: { accept: "application/json" } }),
    catch: (error) => failed(reasonOf(error))
  }).pipe(
    Effect.filterOrFail(
      (response) => response.ok,
      (response) => failed(`HTTP ${response.status}`)
    ),
    Effect.flatMap((response) =>
      Effect.tryPromise({ try: () => response.text(), catch: (error) => failed(reasonOf(error)) })
    )
  )
}

const mark = (check: boolean | null): string => (check === null ? "none" : check ? "ok" : "FAILED")

/** The report, one line per layer, as a person reads it. */
export const formatReport = (certificate: unknown, report: CertificateVerification, withTreeHead: boolean): string => {
  const cert = certificate as {
    certificate_id?: unknown
    key_id?: unknown
    subject?: { checkpoint_id?: unknown; agent_id?: unknown }
    claims?: { verdict?: unknown; analysis_model?: unknown; concerns?: unknown }
    merkle?: { leaf_index?: unknown; tree_size?: unknown }
    verdict_proof?: { security?: { proven_bits?: unknown; conjectured_bits?: unknown } } | null
  } | null
  const { checks } = report
  const proof = cert?.verdict_proof?.security
  // A verdict the rule derived from the failure-policy concern (core/FailurePolicy.ts): said so.
  const failure = checks.verdict ? failurePolicyReason(cert?.claims as FailurePolicyClaims) : undefined
  const lines = [
    `Certificate ${String(cert?.certificate_id ?? "?")}`,
    `  checkpoint  ${String(cert?.subject?.checkpoint_id ?? "?")}  agent ${String(cert?.subject?.agent_id ?? "?")}`,
    `  signature      ${mark(checks.signature)}  key ${String(cert?.key_id ?? "?")}`,
    `  chain          ${mark(checks.chain)}`,
    `  merkle         ${mark(checks.merkle)}  leaf ${String(cert?.merkle?.leaf_index ?? "?")} of ${String(cert?.merkle?.tree_size ?? "?")}` +
      (withTreeHead ? ", against the signed tree head given" : ""),
    `  verdict        ${mark(checks.verdict)}  ${String(cert?.claims?.verdict ?? "?")}` +
      (failure === undefined ? "" : `  by the failure policy (fail_closed): not analysed, ${failure}`),
    `  verdict proof  ${checks.verdict_proof === null ? "none attached" : mark(checks.verdict_proof)}` +
      (checks.verdict_proof === true && proof !== undefined
        ? `  STARK, ${String(proof.proven_bits)}-bit proven / ${String(proof.conjectured_bits)}-bit conjectured security`
        : ""),
    report.valid ? "VALID" : "INVALID",
    ...report.errors.map((error) => `  - ${error}`)
  ]
  return lines.join("\n")
}

/** A saved governance inclusion proof (`GET …/governance-log/{index}/inclusion-proof`) rather than a certificate. */
const isGovernanceProof = (json: unknown): boolean =>
  typeof json === "object" && json !== null && "record" in json && "audit_path" in json && "signed_tree_head" in json

/** The agent of an agent governance log's origin (`…/agents/<id>/governance`); undefined for an organization's. */
const agentOfOrigin = (origin: string): string | undefined => /\/agents\/([^/]+)\/governance$/.exec(origin)?.[1]

/**
 * An `aip.reevaluation` entry's re-evaluation as report lines: with the checkpoints' certificates
 * (already verified, the agent's only), `candor-verdict/1` re-run on each certified concerns less the
 * dropped ones (core/Reevaluation.ts); without them, not checked (and not failed).
 */
const reevaluationLines = (
  record: GovernanceRecord,
  certificates: ReadonlyArray<IntegrityCertificate> | undefined
): { readonly valid: boolean; readonly lines: ReadonlyArray<string> } => {
  const state = Schema.decodeUnknownEither(AipReevaluationState)(record.new_state)
  if (Either.isLeft(state))
    return { valid: false, lines: ["  re-evaluation  FAILED", `  - re-evaluation: new_state: ${state.left.message}`] }
  const { changed } = state.right
  if (certificates === undefined)
    return {
      valid: true,
      lines: [
        `  re-evaluation  not checked: ${changed.length} changed verdict(s); give their certificates with --certificates`
      ]
    }
  const agentId = agentOfOrigin(record.origin)
  const byCheckpoint = new Map(
    certificates
      .filter((certificate) => certificate.subject.agent_id === agentId)
      .map((certificate) => [certificate.subject.checkpoint_id, certificate])
  )
  const errors = checkReevaluation(state.right, byCheckpoint)
  return {
    valid: errors.length === 0,
    lines: [
      `  re-evaluation  ${errors.length === 0 ? "ok" : "FAILED"}  ${changed.length} changed verdict(s) re-derived by ${state.right.rules_version}`,
      ...errors.map((error) => `  - re-evaluation: ${error}`)
    ]
  }
}

/**
 * A governance log entry checked offline: the record decodes, hashes to its leaf, and is included in
 * the signed tree head (the one given with --tree-head, else the proof's own) signed by a listed key
 * under the record's origin. An `aip.reevaluation` entry's changed verdicts are also re-derived from
 * `certificates` when given (verified ones: `verifyFile` checks them first).
 */
export const verifyGovernanceProof = (
  proof: unknown,
  keys: ReadonlyArray<{ readonly publicKey: Uint8Array }>,
  treeHead: string | undefined,
  certificates?: ReadonlyArray<IntegrityCertificate>
): { readonly valid: boolean; readonly lines: ReadonlyArray<string> } => {
  const decoded = Schema.decodeUnknownEither(GovernanceInclusionProof)(proof)
  if (Either.isLeft(decoded)) {
    return { valid: false, lines: ["INVALID", "  - not a governance inclusion proof: " + decoded.left.message] }
  }
  const { record, index, audit_path, signed_tree_head } = decoded.right
  const result = verifyGovernanceEntry({
    record,
    index,
    auditPath: audit_path,
    signedTreeHead: treeHead ?? signed_tree_head,
    verifiers: keys.map((key) => ({ name: record.origin, publicKey: key.publicKey }))
  })
  const reevaluation =
    record.action === "aip.reevaluation" ? reevaluationLines(record, certificates) : { valid: true, lines: [] }
  const valid = result.ok && reevaluation.valid
  const lines = [
    `Governance entry ${index} of ${record.origin}`,
    `  ${record.action} by ${record.actor} at ${record.created_at}`,
    `  inclusion      ${result.ok ? "ok" : "FAILED"}` +
      (treeHead !== undefined ? ", against the signed tree head given" : ""),
    ...reevaluation.lines.filter((line) => !line.startsWith("  - ")),
    valid ? "VALID" : "INVALID",
    ...(result.ok ? [] : [`  - ${result.error}`]),
    ...reevaluation.lines.filter((line) => line.startsWith("  - "))
  ]
  return { valid, lines }
}

const decodeCertificate = Schema.decodeUnknownEither(IntegrityCertificate)

/** The most certificates one --certificates file may hold (a re-evaluation changes at most 40). */
const MAX_CERTIFICATES = 1000

/**
 * The --certificates file (a JSON array of certificates as GET /v1/checkpoints/{id}/certificate
 * returns them), each verified with the keys: the valid ones, and a line for each that is not.
 */
const loadCertificates = (
  path: string,
  keys: ReadonlyArray<{ readonly keyId: string; readonly publicKey: Uint8Array }>
) =>
  Effect.gen(function* () {
    const json = yield* parseJson(yield* readText(path), path)
    if (!Array.isArray(json) || json.length > MAX_CERTIFICATES)
      return yield* new VerifyUsageError({
        message: `${path} is not a JSON array of at most ${MAX_CERTIFICATES} certificates`
      })
    const valid: Array<IntegrityCertificate> = []
    const errors: Array<string> = []
    json.forEach((certificate: unknown, i) => {
      const report = verifyWithKeys(certificate, keys, { verifyVerdictProof })
      const decoded = decodeCertificate(certificate)
      if (report.valid && Either.isRight(decoded)) valid.push(decoded.right)
      else errors.push(`  - certificates[${i}] does not verify: ${report.errors.join("; ")}`)
    })
    return { valid, errors }
  })

/** The key listing of exactly one of --keys and --keys-url, as core's verifiers take it. */
const loadKeys = (options: { readonly keys: Option.Option<string>; readonly keysUrl: Option.Option<string> }) =>
  Effect.gen(function* () {
    if (Option.isSome(options.keys) === Option.isSome(options.keysUrl)) {
      return yield* new VerifyUsageError({
        message: "give the signing keys with exactly one of --keys <file> or --keys-url <url>"
      })
    }
    const listing = Option.isSome(options.keys)
      ? yield* keysOf(yield* parseJson(yield* readText(options.keys.value), options.keys.value), options.keys.value)
      : yield* Effect.flatMap(fetchKeys(Option.getOrThrow(options.keysUrl)), (text) =>
          Effect.flatMap(parseJson(text, "the key listing"), (json) => keysOf(json, "the key listing"))
        )
    return listedKeys(listing)
  })

/** A cosignature dated more than this after the local clock counts as from the future. */
const MAX_CLOCK_SKEW_SECONDS = 600

interface WitnessPolicy {
  readonly witnesses: ReadonlyArray<WitnessKey>
  readonly quorum: number
}

/** The --witness-key and --witness-quorum options; `undefined` when no witness is asked for. */
const loadWitnesses = (options: {
  readonly witnessKeys?: ReadonlyArray<string> | undefined
  readonly witnessQuorum?: Option.Option<number> | undefined
}): Effect.Effect<WitnessPolicy | undefined, VerifyUsageError> => {
  const given = options.witnessKeys ?? []
  const quorum = options.witnessQuorum ?? Option.none()
  if (given.length === 0) {
    return Option.isSome(quorum)
      ? Effect.fail(new VerifyUsageError({ message: "--witness-quorum needs at least one --witness-key" }))
      : Effect.succeed(undefined)
  }
  const witnesses: Array<WitnessKey> = []
  for (const vkey of given) {
    const key = parseWitnessKey(vkey)
    if (typeof key === "string")
      return Effect.fail(new VerifyUsageError({ message: `--witness-key ${JSON.stringify(vkey)}: ${key}` }))
    if (witnesses.some((w) => witnessKeyId(w) === witnessKeyId(key)))
      return Effect.fail(new VerifyUsageError({ message: `--witness-key ${key.name} is given twice` }))
    witnesses.push(key)
  }
  const required = Option.getOrElse(quorum, () => witnesses.length)
  if (!Number.isInteger(required) || required < 1 || required > witnesses.length)
    return Effect.fail(
      new VerifyUsageError({
        message: `--witness-quorum must be between 1 and the ${witnesses.length} witness key(s) given`
      })
    )
  return Effect.succeed({ witnesses, quorum: required })
}

/** The witness check of the tree head used, as report lines. */
export const checkWitnesses = (
  note: string,
  policy: WitnessPolicy,
  nowSeconds: number
): { readonly valid: boolean; readonly lines: ReadonlyArray<string> } => {
  const verified = verifyWitnessQuorum(note, policy.witnesses, policy.quorum, {
    notAfter: nowSeconds + MAX_CLOCK_SKEW_SECONDS
  })
  const required = `${policy.quorum} of ${policy.witnesses.length} required`
  if (!verified.ok)
    return { valid: false, lines: [`  witnesses      FAILED  ${required}`, `  - witnesses: ${verified.error}`] }
  return {
    valid: true,
    lines: [
      `  witnesses      ok  ${verified.cosignatures.length} cosigned, ${required}`,
      ...verified.cosignatures.map(
        (c) =>
          `    ${c.witness.name} cosigned size ${verified.checkpoint.size} at ${new Date(c.timestamp * 1000).toISOString()}  (${formatWitnessKey(c.witness).split("+").slice(0, 2).join("+")})`
      )
    ]
  }
}

/** Inserts the witness lines before the final VALID/INVALID verdict, which they may turn to INVALID. */
const withWitnessLines = (
  text: string,
  valid: boolean,
  witnesses: { readonly valid: boolean; readonly lines: ReadonlyArray<string> }
): { readonly text: string; readonly valid: boolean } => {
  const lines = text.split("\n")
  const verdictAt = lines.findIndex((line) => line === "VALID" || line === "INVALID")
  const allValid = valid && witnesses.valid
  const before = verdictAt < 0 ? lines : lines.slice(0, verdictAt)
  const after = verdictAt < 0 ? [] : lines.slice(verdictAt + 1)
  const witnessErrors = witnesses.lines.filter((line) => line.startsWith("  - "))
  const witnessRows = witnesses.lines.filter((line) => !line.startsWith("  - "))
  return {
    text: [...before, ...witnessRows, allValid ? "VALID" : "INVALID", ...after, ...witnessErrors].join("\n"),
    valid: allValid
  }
}

/**
 * Verifies one certificate (or governance inclusion proof) file, or with `export` an evidence
 * export (./VerifyExport.ts); `valid` decides the exit code.
 */
export const verifyFile = (options: {
  readonly certificate: Option.Option<string>
  readonly export?: Option.Option<string> | undefined
  readonly keys: Option.Option<string>
  readonly keysUrl: Option.Option<string>
  readonly treeHead: Option.Option<string>
  readonly certificates?: Option.Option<string> | undefined
  readonly witnessKeys?: ReadonlyArray<string> | undefined
  readonly witnessQuorum?: Option.Option<number> | undefined
}) =>
  Effect.gen(function* () {
    const exportFile = options.export ?? Option.none()
    const witnesses = yield* loadWitnesses(options)
    const now = Math.floor(Date.now() / 1000)
    /** Prints the report, with the witness check of `note` when witnesses were asked for. */
    const conclude = (text: string, valid: boolean, note: string | undefined) =>
      Effect.gen(function* () {
        if (witnesses === undefined) {
          yield* Console.log(text)
          return { valid }
        }
        const checked =
          note === undefined
            ? {
                valid: false,
                lines: ["  witnesses      FAILED", "  - witnesses: there is no signed tree head to check"]
              }
            : checkWitnesses(note, witnesses, now)
        const merged = withWitnessLines(text, valid, checked)
        yield* Console.log(merged.text)
        return { valid: merged.valid }
      })
    if (Option.isSome(options.certificate) === Option.isSome(exportFile)) {
      return yield* new VerifyUsageError({
        message: "give exactly one of a certificate file or --export <file>"
      })
    }
    if (Option.isSome(exportFile)) {
      if (Option.isSome(options.treeHead))
        return yield* new VerifyUsageError({ message: "--tree-head does not apply to an export: it ends with its own" })
      const keys = yield* loadKeys(options)
      const report = yield* verifyExportFile(exportFile.value, keys).pipe(
        Effect.mapError(() => new VerifyUsageError({ message: `cannot read ${exportFile.value}` }))
      )
      return yield* conclude(formatExportReport(report), report.valid, report.signed_tree_head ?? undefined)
    }
    const path = Option.getOrThrow(options.certificate)
    const keys = yield* loadKeys(options)
    const certificate = yield* parseJson(yield* readText(path), path)
    const treeHead = Option.isSome(options.treeHead) ? yield* readText(options.treeHead.value) : undefined
    const certificatesFile = options.certificates ?? Option.none()
    if (isGovernanceProof(certificate)) {
      const given = Option.isSome(certificatesFile) ? yield* loadCertificates(certificatesFile.value, keys) : undefined
      const governance = verifyGovernanceProof(certificate, keys, treeHead, given?.valid)
      const own = (certificate as { signed_tree_head?: unknown }).signed_tree_head
      const refused = given?.errors ?? []
      return yield* conclude(
        [...governance.lines, ...refused].join("\n"),
        governance.valid && refused.length === 0,
        treeHead ?? (typeof own === "string" ? own : undefined)
      )
    }
    if (Option.isSome(certificatesFile))
      return yield* new VerifyUsageError({
        message: "--certificates applies to a governance entry's inclusion proof (an aip.reevaluation entry)"
      })
    if (witnesses !== undefined && treeHead === undefined) {
      return yield* new VerifyUsageError({
        message:
          "--witness-key checks the cosignatures on a signed tree head: give it with --tree-head " +
          "(the signed_tree_head of GET /v1/checkpoints/{id}/inclusion-proof?tree_size=<the certificate's tree_size>)"
      })
    }
    const report = verifyWithKeys(certificate, keys, { treeHead, verifyVerdictProof })
    return yield* conclude(formatReport(certificate, report, treeHead !== undefined), report.valid, treeHead)
  })

export const verifyCommand = Command.make(
  "verify",
  {
    certificate: Args.file({ name: "certificate.json" }).pipe(
      Args.withDescription(
        "The certificate, as GET /v1/checkpoints/{id}/certificate returns it, or a governance log entry's inclusion proof"
      ),
      Args.optional
    ),
    export: Options.file("export").pipe(
      Options.optional,
      Options.withDescription(
        "An evidence export (GET /v1/agents/{id}/export, JSONL) instead: every certificate and every inclusion against its final signed tree head"
      )
    ),
    keys: Options.file("keys").pipe(
      Options.optional,
      Options.withDescription("The signing keys: a saved GET /v1/keys answer (or `candor keys list --json`)")
    ),
    keysUrl: Options.text("keys-url").pipe(
      Options.optional,
      Options.withDescription("Fetch the signing keys once from this URL (…/v1/keys)")
    ),
    treeHead: Options.file("tree-head").pipe(
      Options.optional,
      Options.withDescription("A signed tree head (C2SP note) to check the inclusion against")
    ),
    certificates: Options.file("certificates").pipe(
      Options.optional,
      Options.withDescription(
        "With an aip.reevaluation entry's inclusion proof: a JSON array of the certificates of the checkpoints it changed, whose verdicts are re-derived"
      )
    ),
    witnessKeys: Options.text("witness-key").pipe(
      Options.repeated,
      Options.withDescription(
        "A witness's verifier key (<name>+<hash>+<base64>, type 0x04; repeatable): the signed tree head used must carry its valid cosignature"
      )
    ),
    witnessQuorum: Options.integer("witness-quorum").pipe(
      Options.optional,
      Options.withDescription("How many of the --witness-key witnesses must have cosigned (default: all)")
    )
  },
  (options) =>
    verifyFile(options).pipe(
      Effect.map((report) => {
        // 0 only for a valid certificate; runMain keeps the code when the program succeeds.
        if (!report.valid) process.exitCode = 1
      }),
      Effect.catchTag("VerifyUsageError", (error) =>
        Effect.zipRight(
          Console.error(`candor verify: ${error.message}`),
          Effect.sync(() => {
            process.exitCode = 2
          })
        )
      )
    )
).pipe(
  Command.withDescription(
    "Verify a certificate offline (signature, chain link, Merkle inclusion, verdict proof), a governance log entry against a signed tree head, or a whole evidence export"
  )
)
