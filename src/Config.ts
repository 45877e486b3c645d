/**
 * Every setting Candor reads from the environment, in one place (docs/configuration.md).
 *
 * Each key is declared once, as a `Setting`: its environment name, its default, its meaning and
 * the `Config` that reads and validates it. The `Config` (with `Config.withDefault` and
 * `Config.withDescription`) and the `configDocs` table (docs/configuration.md, `candor --help`) are both derived
 * from that one declaration, so code and documentation cannot drift apart.
 *
 * An empty variable (`PORT=`) counts as unset, as it does in most `.env` tooling.
 * Secrets are `Redacted`: they print as `<redacted>` and never reach a log line.
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { DEFAULT_PREFIX, PARTITIONS } from "../adapters/bus/Subjects.js"
import type { WitnessEndpoint } from "../adapters/witness/WitnessClient.js"
import { formatWitnessKey, parseWitnessKey, witnessKeyId } from "../core/Cosignature.js"
import { noTrustedProxies, parseTrustedProxies, type TrustedProxies } from "../adapters/http/ClientAddress.js"
import {
  DEFAULT_PUBLIC_RATE_LIMITS,
  formatPublicRateLimits,
  parsePublicRateLimits,
  type PublicRateLimits
} from "./http/PublicRoutes.js"
import { DEFAULT_POLICY_MAX_RULES } from "../core/Policy.js"
import { EVIDENCE_REDACTION_MODES, type EvidenceRedactionMode } from "../core/schema/EvidenceRedaction.js"
import type { OtlpProtocol } from "../adapters/tracing/Tracing.js"

export class CandorConfig extends Context.Tag("candor/src/CandorConfig")<
  CandorConfig,
  {
    /** Port of the management API (and of `/health/*`). */
    readonly port: number
    /** Port of the LLM gateway that SDKs point at. */
    readonly gatewayPort: number
    /** Address both servers bind to. */
    readonly host: string
    /** PEM certificate chain of both servers; with `tlsKeyFile` (both or neither) they serve HTTPS. */
    readonly tlsCertFile: Option.Option<string>
    /** PEM private key of `tlsCertFile`. */
    readonly tlsKeyFile: Option.Option<string>
    /** Directory of the embedded database and of generated keys; created at start. */
    readonly dataDir: string
    /** PostgreSQL connection string; `None` selects the embedded PGlite database in `dataDir`. */
    readonly databaseUrl: Option.Option<Redacted.Redacted>
    /** NATS server with JetStream; `None` selects the in-process bus. */
    readonly natsUrl: Option.Option<string>
    /** Prefix of every NATS subject, stream and KV bucket, so deployments can share one server. */
    readonly natsPrefix: string
    /**
     * Copies of every stream and KV bucket the deployment keeps in NATS (1, 3 or 5): 3 or 5 on a NATS
     * cluster, so losing a server loses nothing and its streams elect another leader.
     */
    readonly natsReplicas: number
    /** Event partitions P: fixed for the life of a deployment. */
    readonly partitions: number
    /** Events per JetStream message a gateway publishes (micro-batches, flushed within 2 ms); 1: one event per message. */
    readonly busBatchEvents: number
    /** Names this worker in partition leases (unset: host and pid). */
    readonly workerId: Option.Option<string>
    /** Requests per second per credential on the Enterprise plan (set per deployment, by contract). */
    readonly enterpriseRateLimit: number
    /** Requests a minute per client with provider keys the gateway does not know, after the burst; 0: no limit. */
    readonly gatewayUnknownKeyRate: number
    /** Requests with unknown keys a client may send at once. */
    readonly gatewayUnknownKeyBurst: number
    /** Upstream for `/anthropic/*`. A bare origin: the SDK's paths already start with `/v1`. */
    readonly anthropicBaseUrl: string
    /** Upstream for `/openai/*`. A bare origin, without `/v1`: clients use `{gateway}/openai/v1` as base URL. */
    readonly openaiBaseUrl: string
    /** Upstream for `/gemini/*`. A bare origin: the SDK's paths start with `/v1beta`. */
    readonly geminiBaseUrl: string
    /** Tools a request may declare when the gateway reads them (an active tool policy); 413 above. */
    readonly gatewayMaxTools: number
    /** Longest tool name the gateway accepts when it reads the tools; 413 above. */
    readonly gatewayMaxToolName: number
    /** Request bytes the gateway holds at once per credential (the key's hash, whatever the agent label); 429 above. */
    readonly gatewayInflightBytesPerCredential: number
    /** Request bytes the gateway holds at once per organization; 429 above. */
    readonly gatewayInflightBytesPerOrg: number
    /** Request bytes the gateway holds at once in all; 503 above. */
    readonly gatewayInflightBytes: number
    /** Rules a stored tool policy may hold (forbidden rules, triggers, mapping globs and card actions); 400 above. */
    readonly policyMaxRules: number
    /** The judge: `rules` (offline), or `anthropic:<model>` / `openai:<model>`. */
    readonly analysisModel: string
    /** Base URL of the LLM judge; `None` uses the provider's public URL. */
    readonly analysisBaseUrl: Option.Option<string>
    /** API key of the LLM judge. */
    readonly analysisApiKey: Option.Option<Redacted.Redacted>
    /** Judge calls a gateway has in flight at once, across agents (and connections to an LLM judge). */
    readonly analysisConcurrency: number
    /** Deadline of one judge call, in milliseconds; past it the exchange is recorded unanalysed (`judge_timeout`). */
    readonly analysisTimeoutMs: number
    /** What a judge's text may keep of the reasoning (none, mask, omit); an organization may only tighten it. */
    readonly evidenceRedaction: EvidenceRedactionMode
    /** HMAC secret of identity-provider tokens; `None` with no JWKS uses a dev secret in `dataDir`. */
    readonly authJwtSecret: Option.Option<Redacted.Redacted>
    /** JWKS endpoint of the identity provider (asymmetric tokens). */
    readonly authJwksUrl: Option.Option<string>
    /** Required `iss` claim of identity-provider tokens. */
    readonly authJwtIssuer: Option.Option<string>
    /** Required `aud` claim of identity-provider tokens. */
    readonly authJwtAudience: Option.Option<string>
    /** The administrative key; `None` refuses every service-role call. */
    readonly serviceRoleKey: Option.Option<Redacted.Redacted>
    /** Ed25519 private key of certificates and tree heads; `None` generates one into `dataDir`. */
    readonly signingKey: Option.Option<Redacted.Redacted>
    /** Key-encryption key(s) of stored secrets, active first; `None` generates one into `dataDir`. */
    readonly secretKey: Option.Option<Redacted.Redacted>
    /**
     * Webhooks may use plain http and reach private, loopback and link-local addresses (development
     * and tests only; adapters/webhooks/WebhookUrlGuard.ts reads the same variable).
     */
    readonly webhookAllowPrivate: boolean
    /**
     * MCP servers may use plain http and private, loopback and link-local addresses (development and
     * tests only; docs/mcp.md).
     */
    readonly mcpAllowPrivate: boolean
    /**
     * The gateway's URL as agents reach it, named in each MCP server's `mcp_url` (docs/mcp.md); none:
     * the local gateway (a process with `--role api` alone names its host's GATEWAY_PORT and warns).
     */
    readonly gatewayPublicUrl: Option.Option<string>
    /** Log origin: signed tree heads name `<logOrigin>/agents/<agent_id>`. */
    readonly logOrigin: string
    /** Witnesses (c2sp.org/tlog-witness) asked to cosign the agents' tree heads; empty: none (docs/witnesses.md). */
    readonly witnesses: ReadonlyArray<WitnessEndpoint>
    /** Seconds between two witnessing cycles. */
    readonly witnessIntervalSeconds: number
    /** Logs submitted to each witness per cycle, at most. */
    readonly witnessBatch: number
    /** Least severe level that is logged. */
    readonly logLevel: LogLevel.LogLevel
    /** JSON-RPC endpoint of the chain Candor anchors to (docs/on-chain.md); secret: it often carries an API key. */
    readonly chainRpcUrl: Option.Option<Redacted.Redacted>
    /** The private key that owns the anchor contract and pays for its transactions. */
    readonly chainPrivateKey: Option.Option<Redacted.Redacted>
    /** Address of the deployed CandorAnchor contract (`candor chain deploy` prints it). */
    readonly chainContract: Option.Option<string>
    /** How often the worker role anchors every changed tree head; `None`: never on its own. */
    readonly chainAnchorInterval: Option.Option<Duration.Duration>
    /** On-chain sends (anchor-root, publish-scores) per organization per hour, through the API. */
    readonly chainSendsPerHour: number
    /** Live (unrevoked) API keys one user may hold, personal and organization keys they created. */
    readonly apiKeysPerUser: number
    /** Live (unrevoked) API keys one organization may hold. */
    readonly apiKeysPerOrg: number
    /** Proxies whose `X-Forwarded-For` names the client (CIDRs); none: the socket address is the client. */
    readonly trustedProxies: TrustedProxies
    /** Per-client limits of the routes that answer without credentials, by class (src/http/PublicRoutes.ts). */
    readonly publicRateLimits: PublicRateLimits
    /** OTLP base URL: traces go to `{endpoint}/v1/traces`; with the traces endpoint unset too, no tracing. */
    readonly otlpEndpoint: Option.Option<string>
    /** OTLP traces URL, used as is (over `otlpEndpoint`). */
    readonly otlpTracesEndpoint: Option.Option<string>
    /** The OTLP encoding: `http/protobuf` or `http/json`. */
    readonly otlpProtocol: OtlpProtocol
    /** Headers of every OTLP export (a collector's credentials): secret values. */
    readonly otlpHeaders: Readonly<Record<string, Redacted.Redacted>>
    /** The traces' `service.name`. */
    readonly otelServiceName: string
    /** Milliseconds between two exports of buffered spans. */
    readonly otelScheduleDelayMs: number
  }
>() {}

type Settings = CandorConfig["Type"]

const MIB = 1024 * 1024

export const defaults: Settings = {
  port: 8080,
  gatewayPort: 8081,
  host: "127.0.0.1",
  tlsCertFile: Option.none(),
  tlsKeyFile: Option.none(),
  dataDir: "./.candor",
  databaseUrl: Option.none(),
  natsUrl: Option.none(),
  natsPrefix: DEFAULT_PREFIX,
  natsReplicas: 1,
  partitions: PARTITIONS,
  busBatchEvents: 1,
  workerId: Option.none(),
  enterpriseRateLimit: 1000,
  gatewayUnknownKeyRate: 60,
  gatewayUnknownKeyBurst: 100,
  anthropicBaseUrl: "https://api.anthropic.com",
  openaiBaseUrl: "https://api.openai.com",
  geminiBaseUrl: "https://generativelanguage.googleapis.com",
  gatewayMaxTools: 512,
  gatewayMaxToolName: 128,
  gatewayInflightBytesPerCredential: 64 * MIB,
  gatewayInflightBytesPerOrg: 256 * MIB,
  gatewayInflightBytes: 1024 * MIB,
  policyMaxRules: DEFAULT_POLICY_MAX_RULES,
  analysisModel: "rules",
  analysisBaseUrl: Option.none(),
  analysisApiKey: Option.none(),
  analysisConcurrency: 32,
  analysisTimeoutMs: 10_000,
  evidenceRedaction: "none",
  authJwtSecret: Option.none(),
  authJwksUrl: Option.none(),
  authJwtIssuer: Option.none(),
  authJwtAudience: Option.none(),
  serviceRoleKey: Option.none(),
  signingKey: Option.none(),
  secretKey: Option.none(),
  webhookAllowPrivate: false,
  mcpAllowPrivate: false,
  gatewayPublicUrl: Option.none(),
  logOrigin: "candor.local",
  witnesses: [],
  witnessIntervalSeconds: 60,
  witnessBatch: 100,
  logLevel: LogLevel.Info,
  chainRpcUrl: Option.none(),
  chainPrivateKey: Option.none(),
  chainContract: Option.none(),
  chainAnchorInterval: Option.none(),
  chainSendsPerHour: 20,
  apiKeysPerUser: 25,
  apiKeysPerOrg: 100,
  trustedProxies: noTrustedProxies,
  publicRateLimits: DEFAULT_PUBLIC_RATE_LIMITS,
  otlpEndpoint: Option.none(),
  otlpTracesEndpoint: Option.none(),
  otlpProtocol: "http/protobuf",
  otlpHeaders: {},
  otelServiceName: "candor",
  otelScheduleDelayMs: 5_000
}

// ---------------------------------------------------------------------------------------------
// Readers: `Config.nested(…, key)` around the parser, so every error names the variable.

/** A parser from the raw text to `A`; `Left(message)` becomes an InvalidData error at the key. */
type Parse<A> = (text: string) => Either.Either<A, string>

const reader =
  <A>(parse: Parse<A>) =>
  (key: string): Config.Config<A> =>
    Config.string().pipe(
      Config.mapOrFail((raw) => {
        const text = raw.trim()
        if (text === "") return Either.left(ConfigError.MissingData([], `${key} is empty`))
        return Either.mapLeft(parse(text), (message) => ConfigError.InvalidData([], `${key} ${message}`))
      }),
      Config.nested(key)
    )

const text = reader(Either.right)

const port = reader((text) => {
  const n = Number(text)
  // 0: any free port (the bound one is logged).
  return /^\d+$/.test(text) && n <= 65535
    ? Either.right(n)
    : Either.left(`must be a TCP port between 0 (any free port) and 65535, got "${text}"`)
})

/** An absolute http(s) URL, without a trailing slash so that `${base}${path}` is right. */
const parseHttpUrl: Parse<string> = (text) => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? Either.right(text.replace(/\/+$/, ""))
    : Either.left(`must be an absolute http:// or https:// URL, got "${text}"`)
}
const httpUrl = reader(parseHttpUrl)

/** The gateway forwards `/openai/v1/…` as `/v1/…`, so a base ending in `/v1` would double it. */
const openaiUrl = reader((text) =>
  Either.flatMap(parseHttpUrl(text), (url) =>
    url.endsWith("/v1")
      ? Either.left(`must be the bare origin, without /v1 (the gateway forwards the /v1 clients send), got "${text}"`)
      : Either.right(url)
  )
)

const partitionCount = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 1024
    ? Either.right(n)
    : Either.left(`must be a whole number of partitions between 1 and 1024, got "${text}"`)
})

const batchEvents = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 1024
    ? Either.right(n)
    : Either.left(`must be a whole number of events between 1 and 1024, got "${text}"`)
})

const workerId = reader((text) =>
  /^[-\w]{1,64}$/.test(text)
    ? Either.right(text)
    : Either.left(`must be 1 to 64 letters, digits, "-" or "_", got "${text}"`)
)

const positiveRate = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 1_000_000
    ? Either.right(n)
    : Either.left(`must be a whole number of requests per second between 1 and 1000000, got "${text}"`)
})

const requestsPerMinute = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n <= 1_000_000
    ? Either.right(n)
    : Either.left(`must be a whole number of requests a minute between 0 and 1000000, got "${text}"`)
})

const burst = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 1_000_000
    ? Either.right(n)
    : Either.left(`must be a whole number of requests between 1 and 1000000, got "${text}"`)
})

const concurrency = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 4096
    ? Either.right(n)
    : Either.left(`must be a whole number between 1 and 4096, got "${text}"`)
})

const analysisTimeout = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 100 && n <= 600_000
    ? Either.right(n)
    : Either.left(`must be a whole number of milliseconds between 100 and 600000, got "${text}"`)
})

/** A whole number from `min` to `max`, of what `unit` says. */
const wholeNumber = (min: number, max: number, unit: string) =>
  reader((text) => {
    const n = Number(text)
    return /^\d+$/.test(text) && n >= min && n <= max
      ? Either.right(n)
      : Either.left(`must be a whole number of ${unit} from ${min} to ${max}, got "${text}"`)
  })

/**
 * Bytes, as a whole number or with KiB, MiB or GiB; at least the largest request body the gateway
 * takes (32 MiB), or a request it accepts could never fit.
 */
const inflightBytes = reader((text) => {
  const match = /^(\d+)\s*(KiB|MiB|GiB)?$/.exec(text)
  const n =
    match === null
      ? Number.NaN
      : Number(match[1]) * { KiB: 1024, MiB: MIB, GiB: 1024 * MIB, none: 1 }[match[2] ?? "none"]!
  return Number.isSafeInteger(n) && n >= 32 * MIB
    ? Either.right(n)
    : Either.left(`must be a number of bytes (optionally with KiB, MiB or GiB) of at least 32MiB, got "${text}"`)
})

/** The OTLP encodings offered: gRPC is not (the exporter is an HTTP client). */
const otlpProtocol = reader((text) =>
  text === "http/protobuf" || text === "http/json"
    ? Either.right(text as OtlpProtocol)
    : Either.left(`must be http/protobuf or http/json (grpc is not supported), got "${text.slice(0, 40)}"`)
)

/**
 * `name=value` pairs, comma-separated, values URL-encoded (the OpenTelemetry specification's
 * format), kept `Redacted`: they are a collector's credentials. An error names the pair's position,
 * never its text.
 */
const otlpHeaders = (key: string): Config.Config<Readonly<Record<string, Redacted.Redacted>>> =>
  Config.redacted(text(key)).pipe(
    Config.mapOrFail((raw) => {
      const headers: Record<string, Redacted.Redacted> = {}
      const pairs = Redacted.value(raw).split(",")
      for (const [i, pair] of pairs.entries()) {
        const at = pair.indexOf("=")
        const name = at < 0 ? "" : pair.slice(0, at).trim().toLowerCase()
        let value: string | undefined
        try {
          value = at < 0 ? undefined : decodeURIComponent(pair.slice(at + 1).trim())
        } catch {
          value = undefined
        }
        if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || value === undefined)
          return Either.left(
            ConfigError.InvalidData([key], `${key} pair ${i + 1} must be name=value (URL-encoded; value not shown)`)
          )
        headers[name] = Redacted.make(value)
      }
      return Either.right(headers)
    })
  )

const natsUrl = reader((text) =>
  // The NATS client also accepts a comma-separated list of servers.
  text.split(",").every((s) => URL.canParse(s.trim()))
    ? Either.right(text)
    : Either.left(`must be a NATS URL such as nats://127.0.0.1:4222, got "${text}"`)
)

/**
 * JetStream replicates with Raft, which needs a majority: an even count tolerates no more failures
 * than the odd count below it, so only 1, 3 and 5 are accepted (the NATS documentation's advice).
 */
const natsReplicas = reader((text) =>
  text === "1" || text === "3" || text === "5"
    ? Either.right(Number(text))
    : Either.left(
        `must be 1, 3 or 5 (copies of each stream and KV bucket, at most the NATS cluster's servers), got "${text}"`
      )
)

const evidenceRedaction = reader((text) => {
  const mode = text.trim().toLowerCase()
  return (EVIDENCE_REDACTION_MODES as ReadonlyArray<string>).includes(mode)
    ? Either.right(mode as EvidenceRedactionMode)
    : Either.left(`must be none, mask or omit, got ${JSON.stringify(text.slice(0, 40))}`)
})

// Validated after redaction, so that neither the value nor a message quoting it can leak
// (Config.redacted also blanks the messages of errors raised beneath it).
const postgresUrl = (key: string) =>
  Config.redacted(text(key)).pipe(
    Config.mapOrFail((url) =>
      /^postgres(ql)?:\/\//.test(Redacted.value(url)) && URL.canParse(Redacted.value(url))
        ? Either.right(url)
        : Either.left(
            ConfigError.InvalidData([key], `${key} must be a postgres:// or postgresql:// URL (value not shown)`)
          )
    )
  )

const secret = (key: string) => Config.redacted(text(key))

// NATS forbids `.`, `*`, `>` and spaces in stream names; KV buckets allow only these characters.
const natsPrefix = reader((text) =>
  /^[A-Za-z0-9_-]+$/.test(text)
    ? Either.right(text)
    : Either.left(`may contain only letters, digits, "-" and "_", got "${text}"`)
)

const analysisModel = reader((text) =>
  text === "rules" || /^(anthropic|openai):\S+$/.test(text)
    ? Either.right(text)
    : Either.left(`must be "rules", "anthropic:<model>" or "openai:<model>", got "${text}"`)
)

// The origin is the first line of a signed note (C2SP tlog-checkpoint): no spaces or newlines.
const flag = reader((text) => {
  const lower = text.toLowerCase()
  return lower === "true" || lower === "false" ? Either.right(lower === "true") : Either.left("must be true or false")
})

const logOrigin = reader((text) =>
  /^\S+$/.test(text) ? Either.right(text) : Either.left(`must not contain whitespace, got "${text}"`)
)

/** At most this many witnesses: a note holds at most 100 signature lines, and each witness costs requests. */
export const MAX_WITNESSES = 32

/**
 * `<submission URL> <verifier key>` entries, separated by commas or newlines. The operator's own
 * choice, so private and loopback addresses are allowed (unlike webhooks, which users register).
 */
export const parseWitnesses: Parse<ReadonlyArray<WitnessEndpoint>> = (text) => {
  const entries = text
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length > MAX_WITNESSES) return Either.left(`may list at most ${MAX_WITNESSES} witnesses`)
  const witnesses: Array<WitnessEndpoint> = []
  for (const [i, entry] of entries.entries()) {
    const parts = entry.split(/\s+/)
    if (parts.length !== 2)
      return Either.left(`entry ${i + 1} must be "<url> <verifier key>", got ${parts.length} word(s)`)
    const url = parseHttpUrl(parts[0]!)
    if (Either.isLeft(url)) return Either.left(`entry ${i + 1}: the URL ${url.left}`)
    const key = parseWitnessKey(parts[1])
    if (typeof key === "string") return Either.left(`entry ${i + 1}: the verifier key is not a witness key: ${key}`)
    if (witnesses.some((w) => witnessKeyId(w.key) === witnessKeyId(key)))
      return Either.left(`entry ${i + 1}: witness ${key.name} is listed twice`)
    witnesses.push({ url: url.right, key, vkey: formatWitnessKey(key) })
  }
  return Either.right(witnesses)
}
const witnesses = reader(parseWitnesses)

const witnessInterval = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 86_400
    ? Either.right(n)
    : Either.left(`must be a whole number of seconds between 1 and 86400, got "${text}"`)
})

const witnessBatch = reader((text) => {
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 10_000
    ? Either.right(n)
    : Either.left(`must be a whole number of logs between 1 and 10000, got "${text}"`)
})

const logLevel = reader((text) => {
  const level = LogLevel.allLevels.find((l) => l.label === text.toUpperCase())
  return level !== undefined
    ? Either.right(level)
    : Either.left(`must be one of ${LogLevel.allLevels.map((l) => l.label.toLowerCase()).join(", ")}, got "${text}"`)
})

// The RPC URL is operator configuration, so a private or loopback address is allowed (a node on
// the same host is common). Validated after redaction, like DATABASE_URL: an RPC URL often carries
// a provider's API key.
const rpcUrl = (key: string) =>
  Config.redacted(text(key)).pipe(
    Config.mapOrFail((url) =>
      /^https?:\/\//.test(Redacted.value(url)) && URL.canParse(Redacted.value(url))
        ? Either.right(url)
        : Either.left(ConfigError.InvalidData([key], `${key} must be an http:// or https:// URL (value not shown)`))
    )
  )

const privateKey = (key: string) =>
  Config.redacted(text(key)).pipe(
    Config.mapOrFail((value) =>
      /^(0x)?[0-9a-fA-F]{64}$/.test(Redacted.value(value))
        ? Either.right(value)
        : Either.left(
            ConfigError.InvalidData([key], `${key} must be 32 bytes of hex, with or without 0x (value not shown)`)
          )
    )
  )

const address = reader((text) =>
  /^0x[0-9a-fA-F]{40}$/.test(text)
    ? Either.right(text)
    : Either.left(`must be a contract address, 0x and 40 hex characters, got "${text}"`)
)

/** At least a minute: each pass is a transaction that costs gas. */
const interval = reader((text) => {
  const decoded = Duration.decodeUnknown(text)
  return Option.isSome(decoded) && Duration.greaterThanOrEqualTo(decoded.value, Duration.minutes(1))
    ? Either.right(decoded.value)
    : Either.left(`must be a duration of at least a minute, such as "6 hours" or "30 minutes", got "${text}"`)
})

const hourlyCount = wholeNumber(1, 100_000, "sends an hour")

const keyCap = wholeNumber(1, 100_000, "keys")

const trustedProxies = reader(parseTrustedProxies)

const publicRateLimits = reader(parsePublicRateLimits)

// ---------------------------------------------------------------------------------------------
// Settings: one declaration per key.

/** One row of the configuration table, as shown in docs/configuration.md and `candor --help`. */
export interface ConfigDoc {
  readonly key: string
  readonly default: string
  readonly description: string
}

interface Setting<A> extends ConfigDoc {
  readonly config: Config.Config<A>
}

const withDefault = <A>(
  key: string,
  read: (key: string) => Config.Config<A>,
  fallback: A,
  description: string,
  shown: string = String(fallback)
): Setting<A> => ({
  key,
  default: shown,
  description,
  config: read(key).pipe(Config.withDefault(fallback), Config.withDescription(description))
})

const optional = <A>(
  key: string,
  read: (key: string) => Config.Config<A>,
  whenUnset: string,
  description: string
): Setting<Option.Option<A>> => ({
  key,
  default: `unset (${whenUnset})`,
  description,
  config: read(key).pipe(Config.withDescription(description), Config.option)
})

const settings: { readonly [K in keyof Settings]: Setting<Settings[K]> } = {
  port: withDefault("PORT", port, defaults.port, "Port of the management API and /health (0: any free port)"),
  gatewayPort: withDefault("GATEWAY_PORT", port, defaults.gatewayPort, "Port of the LLM gateway (0: any free port)"),
  host: withDefault("HOST", text, defaults.host, "Bind address of both servers"),
  tlsCertFile: optional(
    "TLS_CERT_FILE",
    text,
    "plain HTTP",
    "PEM certificate (chain) of both servers: HTTPS, TLS 1.2+, reloaded on SIGHUP"
  ),
  tlsKeyFile: optional("TLS_KEY_FILE", text, "plain HTTP", "PEM private key of TLS_CERT_FILE (set both or neither)"),
  dataDir: withDefault("CANDOR_DATA_DIR", text, defaults.dataDir, "Embedded database and generated keys"),
  databaseUrl: optional("DATABASE_URL", postgresUrl, "embedded PGlite", "PostgreSQL connection string (secret)"),
  natsUrl: optional("NATS_URL", natsUrl, "in-process bus", "NATS server with JetStream"),
  natsPrefix: withDefault(
    "CANDOR_NATS_PREFIX",
    natsPrefix,
    defaults.natsPrefix,
    "Prefix of every NATS subject, stream and KV bucket"
  ),
  natsReplicas: withDefault(
    "CANDOR_NATS_REPLICAS",
    natsReplicas,
    defaults.natsReplicas,
    "Copies of every NATS stream and KV bucket: 1, 3 or 5 (3 or 5 on a NATS cluster; existing ones are updated at start)"
  ),
  partitions: withDefault(
    "CANDOR_PARTITIONS",
    partitionCount,
    defaults.partitions,
    "Event partitions; fixed for the life of a deployment"
  ),
  busBatchEvents: withDefault(
    "CANDOR_BUS_BATCH_EVENTS",
    batchEvents,
    defaults.busBatchEvents,
    "Events per JetStream message a gateway publishes (flushed within 2 ms); 1: one per message. Upgrade workers first"
  ),
  workerId: optional("CANDOR_WORKER_ID", workerId, "<host>-<pid>", "Names this worker in partition leases"),
  enterpriseRateLimit: withDefault(
    "ENTERPRISE_RATE_LIMIT",
    positiveRate,
    defaults.enterpriseRateLimit,
    "Requests per second per credential on the Enterprise plan"
  ),
  gatewayUnknownKeyRate: withDefault(
    "GATEWAY_UNKNOWN_KEY_RATE",
    requestsPerMinute,
    defaults.gatewayUnknownKeyRate,
    "Requests a minute per client address (IPv6 by /64) with provider keys the gateway does not know, after the burst (429 beyond); 0: no limit"
  ),
  gatewayUnknownKeyBurst: withDefault(
    "GATEWAY_UNKNOWN_KEY_BURST",
    burst,
    defaults.gatewayUnknownKeyBurst,
    "Requests with unknown provider keys a client address may send at once"
  ),
  anthropicBaseUrl: withDefault("ANTHROPIC_BASE_URL", httpUrl, defaults.anthropicBaseUrl, "Upstream of /anthropic/*"),
  openaiBaseUrl: withDefault(
    "OPENAI_BASE_URL",
    openaiUrl,
    defaults.openaiBaseUrl,
    "Upstream of /openai/* (bare origin, without /v1)"
  ),
  geminiBaseUrl: withDefault("GEMINI_BASE_URL", httpUrl, defaults.geminiBaseUrl, "Upstream of /gemini/*"),
  gatewayMaxTools: withDefault(
    "GATEWAY_MAX_TOOLS",
    wholeNumber(1, 100_000, "tools"),
    defaults.gatewayMaxTools,
    "Tools a request may declare when the gateway reads them (an active tool policy); 413 above"
  ),
  gatewayMaxToolName: withDefault(
    "GATEWAY_MAX_TOOL_NAME",
    wholeNumber(1, 4096, "characters"),
    defaults.gatewayMaxToolName,
    "Longest tool name (characters) the gateway accepts when it reads the tools; 413 above"
  ),
  gatewayInflightBytesPerCredential: withDefault(
    "GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL",
    inflightBytes,
    defaults.gatewayInflightBytesPerCredential,
    "Request bytes the gateway holds at once per credential (its key, whatever x-candor-agent says); 429 above",
    "64MiB"
  ),
  gatewayInflightBytesPerOrg: withDefault(
    "GATEWAY_INFLIGHT_BYTES_PER_ORG",
    inflightBytes,
    defaults.gatewayInflightBytesPerOrg,
    "Request bytes the gateway holds at once per organization; 429 above",
    "256MiB"
  ),
  gatewayInflightBytes: withDefault(
    "GATEWAY_INFLIGHT_BYTES",
    inflightBytes,
    defaults.gatewayInflightBytes,
    "Request bytes the gateway holds at once in all; 503 above",
    "1GiB"
  ),
  policyMaxRules: withDefault(
    "POLICY_MAX_RULES",
    wholeNumber(1, 100_000, "rules"),
    defaults.policyMaxRules,
    "Rules a stored tool policy may hold: forbidden rules, triggers, mapping globs and card actions; 400 above"
  ),
  analysisModel: withDefault(
    "ANALYSIS_MODEL",
    analysisModel,
    defaults.analysisModel,
    "Judge: rules, anthropic:<model> or openai:<model>"
  ),
  analysisBaseUrl: optional("ANALYSIS_BASE_URL", httpUrl, "the provider's public URL", "Base URL of the LLM judge"),
  analysisApiKey: optional("ANALYSIS_API_KEY", secret, "none", "API key of the LLM judge (secret)"),
  analysisConcurrency: withDefault(
    "ANALYSIS_CONCURRENCY",
    concurrency,
    defaults.analysisConcurrency,
    "Judge calls in flight at once per gateway, across agents"
  ),
  analysisTimeoutMs: withDefault(
    "ANALYSIS_TIMEOUT_MS",
    analysisTimeout,
    defaults.analysisTimeoutMs,
    "Deadline of one judge call (ms); past it the exchange is recorded unanalysed (judge_timeout)"
  ),
  evidenceRedaction: withDefault(
    "CANDOR_EVIDENCE_REDACTION",
    evidenceRedaction,
    defaults.evidenceRedaction,
    "What a judge's text (evidence, descriptions, summary) keeps of the reasoning: none, mask (e-mails, keys and tokens, card numbers, digit runs replaced) or omit (no evidence); an organization may choose a stricter mode, never a looser one (docs/security.md)"
  ),
  authJwtSecret: optional(
    "AUTH_JWT_SECRET",
    secret,
    "a dev secret in the data dir",
    "HMAC secret of identity-provider tokens (secret)"
  ),
  authJwksUrl: optional("AUTH_JWKS_URL", httpUrl, "none", "JWKS URL of the identity provider"),
  authJwtIssuer: optional("AUTH_JWT_ISSUER", text, "not checked", "Required iss claim of tokens"),
  authJwtAudience: optional("AUTH_JWT_AUDIENCE", text, "not checked", "Required aud claim of tokens"),
  serviceRoleKey: optional("SERVICE_ROLE_KEY", secret, "service-role calls refused", "The administrative key (secret)"),
  signingKey: optional("SIGNING_KEY", secret, "generated into the data dir", "Ed25519 private key (secret)"),
  secretKey: optional(
    "CANDOR_SECRET_KEY",
    secret,
    "generated into the data dir",
    "Key-encryption key of stored secrets (secret)"
  ),
  webhookAllowPrivate: withDefault(
    "CANDOR_WEBHOOK_ALLOW_PRIVATE",
    flag,
    defaults.webhookAllowPrivate,
    "true: webhooks may use http and private, loopback, link-local addresses (development and tests only)"
  ),
  mcpAllowPrivate: withDefault(
    "CANDOR_MCP_ALLOW_PRIVATE",
    flag,
    defaults.mcpAllowPrivate,
    "true: MCP servers may use http and private, loopback, link-local addresses (development and tests only)"
  ),
  gatewayPublicUrl: optional(
    "CANDOR_GATEWAY_PUBLIC_URL",
    httpUrl,
    "the local gateway",
    "The gateway's URL as agents reach it (MCP servers' mcp_url); set it with --role api"
  ),
  logOrigin: withDefault(
    "CANDOR_LOG_ORIGIN",
    logOrigin,
    defaults.logOrigin,
    "Log origin: tree heads name <origin>/agents/<agent_id>"
  ),
  witnesses: withDefault(
    "CANDOR_WITNESSES",
    witnesses,
    defaults.witnesses,
    "Witnesses cosigning the tree heads: '<url> <verifier key>' entries, comma- or newline-separated (docs/witnesses.md)",
    "none (no witnessing)"
  ),
  witnessIntervalSeconds: withDefault(
    "CANDOR_WITNESS_INTERVAL",
    witnessInterval,
    defaults.witnessIntervalSeconds,
    "Seconds between two witnessing cycles"
  ),
  witnessBatch: withDefault(
    "CANDOR_WITNESS_BATCH",
    witnessBatch,
    defaults.witnessBatch,
    "Agent logs submitted to each witness per cycle, at most"
  ),
  logLevel: withDefault(
    "LOG_LEVEL",
    logLevel,
    defaults.logLevel,
    "Least severe level logged: all, trace, debug, info, warn, error, fatal, off; debug also logs each startup step as it begins and ends (a start that hangs says where)",
    "info"
  ),
  chainRpcUrl: optional(
    "CANDOR_CHAIN_RPC_URL",
    rpcUrl,
    "on-chain anchoring off",
    "JSON-RPC URL of the chain tree heads and scores are anchored to (secret; docs/on-chain.md)"
  ),
  chainPrivateKey: optional(
    "CANDOR_CHAIN_PRIVATE_KEY",
    privateKey,
    "on-chain anchoring off",
    "Hex private key that deploys and owns the anchor contract and pays its gas (secret)"
  ),
  chainContract: optional(
    "CANDOR_CHAIN_CONTRACT",
    address,
    "on-chain anchoring off",
    "Address of the CandorAnchor contract (candor chain deploy prints it)"
  ),
  chainAnchorInterval: optional(
    "CANDOR_CHAIN_ANCHOR_INTERVAL",
    interval,
    "no periodic anchoring",
    'How often the worker role anchors every changed tree head, e.g. "6 hours"'
  ),
  chainSendsPerHour: withDefault(
    "CANDOR_CHAIN_SENDS_PER_HOUR",
    hourlyCount,
    defaults.chainSendsPerHour,
    "On-chain sends (anchor-root, publish-scores) per organization per hour through the API; 429 beyond"
  ),
  apiKeysPerUser: withDefault(
    "CANDOR_API_KEYS_PER_USER",
    keyCap,
    defaults.apiKeysPerUser,
    "Live API keys a user may hold (personal and organization keys they created; revoked ones do not count)"
  ),
  apiKeysPerOrg: withDefault(
    "CANDOR_API_KEYS_PER_ORG",
    keyCap,
    defaults.apiKeysPerOrg,
    "Live API keys an organization may hold (revoked ones do not count)"
  ),
  trustedProxies: withDefault(
    "CANDOR_TRUSTED_PROXIES",
    trustedProxies,
    defaults.trustedProxies,
    "CIDRs of the proxies in front of the API (comma-separated): the client is then the first X-Forwarded-For hop, read from the right, that is not one of them",
    "none (the socket address is the client)"
  ),
  publicRateLimits: withDefault(
    "CANDOR_PUBLIC_RATE_LIMITS",
    publicRateLimits,
    defaults.publicRateLimits,
    "Per-client limits of the routes answering without credentials, <class>=<per minute>/<burst> (0/…: off), over the defaults; classes in SECURITY.md",
    formatPublicRateLimits(DEFAULT_PUBLIC_RATE_LIMITS)
  ),
  otlpEndpoint: optional(
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    httpUrl,
    "no traces",
    "OTLP/HTTP base URL of a collector: every hop of a request is a span, sent to <endpoint>/v1/traces (docs/tracing.md)"
  ),
  otlpTracesEndpoint: optional(
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    httpUrl,
    "<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces",
    "OTLP/HTTP URL traces are sent to, as is (set alone, it turns tracing on too)"
  ),
  otlpProtocol: withDefault(
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    otlpProtocol,
    defaults.otlpProtocol,
    "Encoding of exported spans: http/protobuf or http/json"
  ),
  otlpHeaders: withDefault(
    "OTEL_EXPORTER_OTLP_HEADERS",
    otlpHeaders,
    defaults.otlpHeaders,
    "Headers of every OTLP export, name=value pairs, comma-separated, URL-encoded (secret: a collector's credentials)",
    "none"
  ),
  otelServiceName: withDefault(
    "OTEL_SERVICE_NAME",
    text,
    defaults.otelServiceName,
    "The service.name of exported spans (the roles of each process or thread are the resource attribute candor.roles)"
  ),
  otelScheduleDelayMs: withDefault(
    "OTEL_BSP_SCHEDULE_DELAY",
    wholeNumber(1, 3_600_000, "milliseconds"),
    defaults.otelScheduleDelayMs,
    "Milliseconds between two exports of the spans buffered (at most 1,000 spans wait: a full buffer is sent at once)"
  )
}

/** The configuration table, in declaration order: the source of the table in docs/configuration.md and `--help`. */
export const configDocs: ReadonlyArray<ConfigDoc> = Object.values(settings).map(
  ({ default: def, description, key }) => ({ key, default: def, description })
)

/** A certificate without its key (or the reverse) is a mistake, not a request for plain HTTP. */
const tlsPair = (s: Settings): Either.Either<Settings, ConfigError.ConfigError> => {
  const missing =
    Option.isSome(s.tlsCertFile) && Option.isNone(s.tlsKeyFile)
      ? ["TLS_KEY_FILE", "TLS_CERT_FILE"]
      : Option.isNone(s.tlsCertFile) && Option.isSome(s.tlsKeyFile)
        ? ["TLS_CERT_FILE", "TLS_KEY_FILE"]
        : undefined
  return missing === undefined
    ? Either.right(s)
    : Either.left(
        ConfigError.MissingData(
          [missing[0]!],
          `${missing[0]} is not set but ${missing[1]} is: set both (HTTPS) or neither (plain HTTP)`
        )
      )
}

/** Reads and validates every setting. */
export const config: Config.Config<Settings> = (
  Config.all(
    Object.fromEntries(Object.entries(settings).map(([field, s]) => [field, s.config]))
  ) as Config.Config<Settings>
) // the mapped type of `settings` guarantees the shape
  .pipe(Config.mapOrFail(tlsPair))

/** The certificate and key files when both are set (HTTPS), otherwise `undefined` (plain HTTP). */
export const tlsFiles = (s: Pick<Settings, "tlsCertFile" | "tlsKeyFile">) =>
  Option.isSome(s.tlsCertFile) && Option.isSome(s.tlsKeyFile)
    ? { certFile: s.tlsCertFile.value, keyFile: s.tlsKeyFile.value }
    : undefined

/** Only LOG_LEVEL: the logger is set up before (and even without) the rest of the configuration. */
export const logLevelConfig: Config.Config<LogLevel.LogLevel> = settings.logLevel.config

/**
 * Where traces go, or `undefined` without tracing: the traces endpoint as is, else the endpoint's
 * `/v1/traces` (the OTLP specification's signal path under a base URL).
 */
export const otlpTracesUrl = (s: Pick<Settings, "otlpEndpoint" | "otlpTracesEndpoint">): string | undefined =>
  Option.isSome(s.otlpTracesEndpoint)
    ? s.otlpTracesEndpoint.value
    : Option.isSome(s.otlpEndpoint)
      ? `${s.otlpEndpoint.value}/v1/traces`
      : undefined

/** Fixed settings over the defaults: for tests and embedding. */
export const layer = (options?: Partial<Settings>): Layer.Layer<CandorConfig> =>
  Layer.succeed(CandorConfig, { ...defaults, ...options })

/** Settings from the current ConfigProvider: the process environment, unless a test replaces it. */
export const layerFromEnv: Layer.Layer<CandorConfig, ConfigError.ConfigError> = Layer.effect(CandorConfig, config)
