/**
 * The composition root: configuration decoding, the HTTP server `candor serve` starts, and the
 * `bin/candor.js` entry point run as a real child process (no build step).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { CandorConfig, config, configDocs, defaults, layer as configLayer, otlpTracesUrl } from "../../src/Config.js"
import { ServeLive } from "../../src/Serve.js"

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))

const decode = (env: Record<string, string>) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("config", () => {
  it.effect("defaults to the configuration table (docs/configuration.md) when nothing is set", () =>
    Effect.gen(function* () {
      const settings = yield* decode({})
      assert.deepStrictEqual(settings, defaults)
      expect(settings.port).toBe(8080)
      expect(settings.gatewayPort).toBe(8081)
      expect(settings.host).toBe("127.0.0.1")
      expect(settings.openaiBaseUrl).toBe("https://api.openai.com")
      expect(settings.logLevel).toBe(LogLevel.Info)
    })
  )

  it.effect("reads overrides; secrets stay redacted; empty means unset", () =>
    Effect.gen(function* () {
      const settings = yield* decode({
        PORT: "9000",
        HOST: "0.0.0.0",
        DATABASE_URL: "postgres://candor:hunter2@db:5432/candor",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:4010/",
        LOG_LEVEL: "debug",
        NATS_URL: "",
        CANDOR_BUS_BATCH_EVENTS: "64"
      })
      expect(settings.busBatchEvents).toBe(64)
      expect(settings.port).toBe(9000)
      expect(settings.host).toBe("0.0.0.0")
      expect(settings.anthropicBaseUrl).toBe("http://127.0.0.1:4010")
      expect(settings.logLevel).toBe(LogLevel.Debug)
      expect(settings.natsUrl).toStrictEqual(Option.none())
      const url = Option.getOrThrow(settings.databaseUrl)
      expect(Redacted.value(url)).toBe("postgres://candor:hunter2@db:5432/candor")
      expect(String(url)).not.toContain("hunter2")
      expect(JSON.stringify(settings)).not.toContain("hunter2")
    })
  )

  it.effect("rejects an invalid port with an error naming the key", () =>
    Effect.gen(function* () {
      for (const value of ["65536", "http", "80.5", "-1"]) {
        const error = yield* Effect.flip(decode({ GATEWAY_PORT: value }))
        expect(String(error)).toContain("GATEWAY_PORT")
        expect(String(error)).toContain("between 0 (any free port) and 65535")
      }
      expect(yield* decode({ PORT: "0", GATEWAY_PORT: "0" })).toMatchObject({ port: 0, gatewayPort: 0 })
      for (const value of ["0", "1025", "8.5"]) {
        const error = yield* Effect.flip(decode({ CANDOR_BUS_BATCH_EVENTS: value }))
        expect(String(error)).toContain("CANDOR_BUS_BATCH_EVENTS")
      }
    })
  )

  it.effect("reads CANDOR_NATS_REPLICAS: 1 by default, 3 or 5 on a cluster, nothing else", () =>
    Effect.gen(function* () {
      expect((yield* decode({})).natsReplicas).toBe(1)
      for (const value of ["1", "3", "5"])
        expect((yield* decode({ CANDOR_NATS_REPLICAS: value })).natsReplicas).toBe(Number(value))
      // Raft needs a majority: 2 or 4 copies survive no more failures than 1 or 3, so they are refused.
      for (const value of ["0", "2", "4", "6", "three", "3.0", "-3"]) {
        const error = String(yield* Effect.flip(decode({ CANDOR_NATS_REPLICAS: value })))
        expect(error).toContain(`CANDOR_NATS_REPLICAS must be 1, 3 or 5`)
        expect(error).toContain(`got "${value}"`)
      }
    })
  )

  it.effect("reads CANDOR_EVIDENCE_REDACTION: none by default, none, mask or omit, nothing else", () =>
    Effect.gen(function* () {
      expect((yield* decode({})).evidenceRedaction).toBe("none")
      for (const value of ["none", "mask", "omit"])
        expect((yield* decode({ CANDOR_EVIDENCE_REDACTION: value })).evidenceRedaction).toBe(value)
      expect((yield* decode({ CANDOR_EVIDENCE_REDACTION: " Mask " })).evidenceRedaction).toBe("mask")
      for (const value of ["masked", "redact", "all", "1"]) {
        const error = String(yield* Effect.flip(decode({ CANDOR_EVIDENCE_REDACTION: value })))
        expect(error).toContain("CANDOR_EVIDENCE_REDACTION must be none, mask or omit")
        expect(error).toContain(`got "${value}"`)
      }
    })
  )

  it.effect("reads the gateway's caps and the policy limit (issue 24), bytes with KiB, MiB or GiB", () =>
    Effect.gen(function* () {
      expect(yield* decode({})).toMatchObject({
        gatewayMaxTools: 512,
        gatewayMaxToolName: 128,
        gatewayInflightBytesPerCredential: 64 * 1024 * 1024,
        gatewayInflightBytesPerOrg: 256 * 1024 * 1024,
        gatewayInflightBytes: 1024 * 1024 * 1024,
        policyMaxRules: 1000
      })
      expect(
        yield* decode({
          GATEWAY_MAX_TOOLS: "64",
          GATEWAY_MAX_TOOL_NAME: "64",
          GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL: "33554432",
          GATEWAY_INFLIGHT_BYTES_PER_ORG: "512MiB",
          GATEWAY_INFLIGHT_BYTES: "2GiB",
          POLICY_MAX_RULES: "200"
        })
      ).toMatchObject({
        gatewayMaxTools: 64,
        gatewayMaxToolName: 64,
        gatewayInflightBytesPerCredential: 32 * 1024 * 1024,
        gatewayInflightBytesPerOrg: 512 * 1024 * 1024,
        gatewayInflightBytes: 2 * 1024 * 1024 * 1024,
        policyMaxRules: 200
      })
      for (const [key, value, message] of [
        ["GATEWAY_MAX_TOOLS", "0", "from 1 to 100000"],
        ["GATEWAY_MAX_TOOL_NAME", "12.5", "from 1 to 4096"],
        ["POLICY_MAX_RULES", "many", "from 1 to 100000"],
        // Below the largest body the gateway takes, a request it accepts could never fit.
        ["GATEWAY_INFLIGHT_BYTES", "16MiB", "at least 32MiB"],
        ["GATEWAY_INFLIGHT_BYTES_PER_ORG", "1 TB", "KiB, MiB or GiB"]
      ] as const) {
        const error = String(yield* Effect.flip(decode({ [key]: value })))
        expect(error).toContain(key)
        expect(error).toContain(message)
      }
    })
  )

  it.effect("reads the chain settings, keeps the RPC URL and key redacted, and never echoes a bad one", () =>
    Effect.gen(function* () {
      const key = "ab".repeat(32)
      const settings = yield* decode({
        CANDOR_CHAIN_RPC_URL: "http://10.0.0.5:8545/v2/secret-token",
        CANDOR_CHAIN_PRIVATE_KEY: `0x${key}`,
        CANDOR_CHAIN_CONTRACT: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        CANDOR_CHAIN_ANCHOR_INTERVAL: "6 hours"
      })
      expect(Redacted.value(Option.getOrThrow(settings.chainRpcUrl))).toBe("http://10.0.0.5:8545/v2/secret-token")
      expect(Option.getOrThrow(settings.chainAnchorInterval)).toStrictEqual(Duration.hours(6))
      expect(JSON.stringify(settings)).not.toContain("secret-token")
      expect(JSON.stringify(settings)).not.toContain(key)
      const badUrl = String(yield* Effect.flip(decode({ CANDOR_CHAIN_RPC_URL: "ws://node/secret-token" })))
      expect(badUrl).toContain("CANDOR_CHAIN_RPC_URL must be an http:// or https:// URL")
      expect(badUrl).not.toContain("secret-token")
      const badKey = String(yield* Effect.flip(decode({ CANDOR_CHAIN_PRIVATE_KEY: "cafe-not-a-key" })))
      expect(badKey).toContain("CANDOR_CHAIN_PRIVATE_KEY must be 32 bytes of hex")
      expect(badKey).not.toContain("cafe")
      expect(String(yield* Effect.flip(decode({ CANDOR_CHAIN_CONTRACT: "0x12" })))).toContain(
        "CANDOR_CHAIN_CONTRACT must be a contract address"
      )
      for (const value of ["30 seconds", "often"])
        expect(String(yield* Effect.flip(decode({ CANDOR_CHAIN_ANCHOR_INTERVAL: value })))).toContain(
          "CANDOR_CHAIN_ANCHOR_INTERVAL must be a duration of at least a minute"
        )
    })
  )

  it.effect("rejects bad URLs, an OpenAI base with /v1, and never echoes a bad DATABASE_URL", () =>
    Effect.gen(function* () {
      expect(String(yield* Effect.flip(decode({ GEMINI_BASE_URL: "generativelanguage" })))).toContain(
        "GEMINI_BASE_URL must be an absolute http:// or https:// URL"
      )
      expect(String(yield* Effect.flip(decode({ OPENAI_BASE_URL: "https://api.openai.com/v1" })))).toContain(
        "OPENAI_BASE_URL must be the bare origin"
      )
      const db = String(yield* Effect.flip(decode({ DATABASE_URL: "mysql://root:hunter2@db/x" })))
      expect(db).toContain("DATABASE_URL")
      expect(db).not.toContain("hunter2")
    })
  )

  it.effect(
    "traces: the OTLP endpoint's /v1/traces or the traces endpoint as is, http/protobuf or http/json, secret headers",
    () =>
      Effect.gen(function* () {
        expect(otlpTracesUrl(yield* decode({}))).toBeUndefined()
        const base = yield* decode({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
        expect(otlpTracesUrl(base)).toBe("http://collector:4318/v1/traces")
        expect(base.otlpProtocol).toBe("http/protobuf")
        const own = yield* decode({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/custom/path",
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20s3cret, x-tenant=7",
          OTEL_SERVICE_NAME: "candor-eu",
          OTEL_BSP_SCHEDULE_DELAY: "200"
        })
        expect(otlpTracesUrl(own)).toBe("https://traces.example/custom/path")
        expect(own.otlpProtocol).toBe("http/json")
        expect(Object.keys(own.otlpHeaders)).toEqual(["authorization", "x-tenant"])
        expect(Redacted.value(own.otlpHeaders["authorization"]!)).toBe("Bearer s3cret")
        expect(String(own.otlpHeaders["authorization"])).not.toContain("s3cret")
        expect([own.otelServiceName, own.otelScheduleDelayMs]).toEqual(["candor-eu", 200])
        const grpc = String(yield* Effect.flip(decode({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })))
        expect(grpc).toContain("OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json")
        const headers = String(yield* Effect.flip(decode({ OTEL_EXPORTER_OTLP_HEADERS: "a=1,s3cret" })))
        expect(headers).toContain("pair 2")
        expect(headers).not.toContain("s3cret")
      })
  )

  it("documents every key of the configuration table, once", () => {
    expect(configDocs.map((doc) => doc.key)).toStrictEqual([
      "PORT",
      "GATEWAY_PORT",
      "HOST",
      "TLS_CERT_FILE",
      "TLS_KEY_FILE",
      "CANDOR_DATA_DIR",
      "DATABASE_URL",
      "NATS_URL",
      "CANDOR_NATS_PREFIX",
      "CANDOR_NATS_REPLICAS",
      "CANDOR_PARTITIONS",
      "CANDOR_BUS_BATCH_EVENTS",
      "CANDOR_WORKER_ID",
      "ENTERPRISE_RATE_LIMIT",
      "GATEWAY_UNKNOWN_KEY_RATE",
      "GATEWAY_UNKNOWN_KEY_BURST",
      "ANTHROPIC_BASE_URL",
      "OPENAI_BASE_URL",
      "GEMINI_BASE_URL",
      "GATEWAY_MAX_TOOLS",
      "GATEWAY_MAX_TOOL_NAME",
      "GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL",
      "GATEWAY_INFLIGHT_BYTES_PER_ORG",
      "GATEWAY_INFLIGHT_BYTES",
      "POLICY_MAX_RULES",
      "ANALYSIS_MODEL",
      "ANALYSIS_BASE_URL",
      "ANALYSIS_API_KEY",
      "ANALYSIS_CONCURRENCY",
      "ANALYSIS_TIMEOUT_MS",
      "CANDOR_EVIDENCE_REDACTION",
      "AUTH_JWT_SECRET",
      "AUTH_JWKS_URL",
      "AUTH_JWT_ISSUER",
      "AUTH_JWT_AUDIENCE",
      "SERVICE_ROLE_KEY",
      "SIGNING_KEY",
      "CANDOR_SECRET_KEY",
      "CANDOR_WEBHOOK_ALLOW_PRIVATE",
      "CANDOR_MCP_ALLOW_PRIVATE",
      "CANDOR_GATEWAY_PUBLIC_URL",
      "CANDOR_LOG_ORIGIN",
      "CANDOR_WITNESSES",
      "CANDOR_WITNESS_INTERVAL",
      "CANDOR_WITNESS_BATCH",
      "LOG_LEVEL",
      "CANDOR_CHAIN_RPC_URL",
      "CANDOR_CHAIN_PRIVATE_KEY",
      "CANDOR_CHAIN_CONTRACT",
      "CANDOR_CHAIN_ANCHOR_INTERVAL",
      "CANDOR_CHAIN_SENDS_PER_HOUR",
      "CANDOR_API_KEYS_PER_USER",
      "CANDOR_API_KEYS_PER_ORG",
      "CANDOR_TRUSTED_PROXIES",
      "CANDOR_PUBLIC_RATE_LIMITS",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      "OTEL_EXPORTER_OTLP_HEADERS",
      "OTEL_SERVICE_NAME",
      "OTEL_BSP_SCHEDULE_DELAY"
    ])
    for (const doc of configDocs) expect(doc.description.length).toBeGreaterThan(0)
  })
})

// `candor serve`'s layers on an ephemeral port, with the data dir in a fresh temporary directory.
const TestServer = Layer.unwrapScoped(
  Effect.gen(function* () {
    const tmp = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
    return ServeLive(["api"]).pipe(Layer.provideMerge(configLayer({ port: 0, dataDir: join(tmp, "nested", "data") })))
  })
).pipe(
  Layer.provide(NodeContext.layer),
  // The request log would only clutter the test output.
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const request = (path: string, init?: RequestInit) =>
  Effect.gen(function* () {
    const { address } = yield* HttpServer.HttpServer
    const response = yield* Effect.promise(() => fetch(`${HttpServer.formatAddress(address)}${path}`, init))
    const body: unknown = yield* Effect.promise(() => response.json())
    return { status: response.status, contentType: response.headers.get("content-type"), body }
  })

layer(TestServer, { excludeTestServices: true, timeout: "60 seconds" })("serve", (it) => {
  it.effect("creates the data dir", () =>
    Effect.gen(function* () {
      const { dataDir } = yield* CandorConfig
      expect(existsSync(dataDir)).toBe(true)
    })
  )

  it.effect("GET /health/live answers 200 JSON", () =>
    Effect.gen(function* () {
      const res = yield* request("/health/live")
      expect(res).toStrictEqual({ status: 200, contentType: "application/json", body: { status: "ok" } })
    })
  )

  it.effect("GET /health/ready answers 200 JSON once the store and the bus answer", () =>
    Effect.gen(function* () {
      const res = yield* request("/health/ready")
      expect(res).toStrictEqual({
        status: 200,
        contentType: "application/json",
        body: { status: "ready", checks: { store: "ok", bus: "ok" } }
      })
    })
  )

  it.effect("an unknown path, or a known path with another method, answers 404 {error}", () =>
    Effect.gen(function* () {
      const expected = { status: 404, contentType: "application/json", body: { error: "not found" } }
      expect(yield* request("/nope?x=1")).toStrictEqual(expected)
      expect(yield* request("/health/live", { method: "POST" })).toStrictEqual(expected)
    })
  )
})

// The bin, as a user runs it: `node bin/candor.js …` from an unrelated working directory.
describe("bin/candor.js", () => {
  it("--help lists the commands and the environment", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "--help"], { cwd: tmpdir() })
    expect(stdout).toContain("serve")
    expect(stdout).toContain("CANDOR_DATA_DIR")
  })

  it("serve logs its address as JSON, answers, and exits 0 on SIGTERM", async () => {
    const port = await freePort()
    const gatewayPort = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), "candor-serve-"))
    const child = spawn(process.execPath, [bin, "serve"], {
      cwd: tmpdir(),
      env: {
        ...process.env,
        PORT: String(port),
        GATEWAY_PORT: String(gatewayPort),
        CANDOR_DATA_DIR: dataDir,
        LOG_LEVEL: "info"
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
      const next = async (): Promise<Record<string, any>> => {
        const line = await lines.next()
        if (line.done === true) throw new Error("candor serve exited before logging")
        return JSON.parse(line.value)
      }
      // Startup may log first (a generated signing key): the address comes once the server is bound.
      let listening = await next()
      while (listening.message !== "listening") listening = await next()
      expect(listening.annotations.url).toBe(`http://127.0.0.1:${port}`)

      const res = await fetch(`http://127.0.0.1:${port}/health/live`)
      expect(await res.json()).toStrictEqual({ status: "ok" })

      child.kill("SIGTERM")
      expect((await next()).message).toBe("shutting down")
      expect(await exited).toBe(0)
    } finally {
      child.kill("SIGKILL")
      rmSync(dataDir, { recursive: true, force: true })
    }
    // A cold start (migrations, key generation) takes seconds, many more on a loaded machine.
  }, 90_000)
})

/** `candor serve` as a child with these settings (a fresh data dir); its stdout and stderr lines, in order. */
const spawnServe = (env: Record<string, string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "candor-serve-"))
  const child = spawn(process.execPath, [bin, "serve"], {
    cwd: tmpdir(),
    env: {
      ...process.env,
      CANDOR_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      DATABASE_URL: "",
      NATS_URL: "",
      HOST: "127.0.0.1",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on("line", (line) => lines.push(line))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  return {
    child,
    lines,
    exited,
    cleanup: () => {
      child.kill("SIGKILL")
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** Holds a port on 127.0.0.1 until released. */
const occupy = () =>
  new Promise<{ port: number; release: () => Promise<void> }>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (typeof address !== "object" || address === null) return reject(new Error("no address"))
      resolve({ port: address.port, release: () => new Promise((done) => server.close(() => done())) })
    })
  })

describe("bound ports", () => {
  for (const variable of ["PORT", "GATEWAY_PORT"] as const) {
    it(`${variable} in use: one clear error line, no stack trace, a non-zero exit`, async () => {
      const taken = await occupy()
      const other = await freePort()
      const serve = spawnServe(
        variable === "PORT"
          ? { PORT: String(taken.port), GATEWAY_PORT: String(other) }
          : { PORT: String(other), GATEWAY_PORT: String(taken.port) }
      )
      try {
        const code = await serve.exited
        expect(code).not.toBe(0)
        const errors = serve.lines.filter((line) => !line.startsWith("{") || JSON.parse(line).logLevel !== "INFO")
        expect(errors).toHaveLength(1)
        expect(JSON.parse(errors[0]!)).toMatchObject({
          logLevel: "ERROR",
          message: `port ${taken.port} (${variable}) is already in use on 127.0.0.1`
        })
        expect(serve.lines.join("\n")).not.toMatch(/\n\s+at /)
      } finally {
        serve.cleanup()
        await taken.release()
      }
    }, 90_000)
  }

  it("PORT=0 and GATEWAY_PORT=0 bind free ports and log the ones bound", async () => {
    const serve = spawnServe({ PORT: "0", GATEWAY_PORT: "0" })
    try {
      const listening = await new Promise<Record<string, any>>((resolve, reject) => {
        const check = () => {
          const line = serve.lines
            .map((l) => (l.startsWith("{") ? JSON.parse(l) : {}))
            .find((l) => l.message === "listening")
          if (line !== undefined) resolve(line)
        }
        serve.child.stdout!.on("data", () => setImmediate(check))
        serve.exited.then((code) => reject(new Error(`exited ${code}:\n${serve.lines.join("\n")}`)))
      })
      const { port, gateway_port: gatewayPort, url, gateway_url: gatewayUrl } = listening.annotations
      expect(port).toBeGreaterThan(0)
      expect(gatewayPort).toBeGreaterThan(0)
      expect(port).not.toBe(gatewayPort)
      expect(url).toBe(`http://127.0.0.1:${port}`)
      expect(gatewayUrl).toBe(`http://127.0.0.1:${gatewayPort}`)
      for (const p of [port, gatewayPort]) {
        const res = await fetch(`http://127.0.0.1:${p}/health/live`)
        expect(res.status).toBe(200)
        expect(await res.json()).toStrictEqual({ status: "ok" })
      }
    } finally {
      serve.cleanup()
    }
  }, 90_000)
})

/** A port the OS just handed out (and released), for the child process to bind. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })
