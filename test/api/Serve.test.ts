/**
 * The API as `candor serve --role api` wires it, with the CLI beside it: a token minted by
 * `candor token` (the data dir's dev secret) and a license issued by `candor license issue` (the
 * data dir's signing key) are accepted by the served API; `/health/ready` checks store and bus.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFile } from "node:child_process"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { CandorConfig, layer as configLayer } from "../../src/Config.js"
import { ServeLive } from "../../src/Serve.js"

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))
const SERVICE_ROLE_KEY = "srk-serve-test-0123456789"

const TestServer = Layer.unwrapScoped(
  Effect.gen(function* () {
    const dataDir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
    return ServeLive(["api"]).pipe(
      Layer.provideMerge(
        configLayer({ port: 0, dataDir, serviceRoleKey: Option.some(Redacted.make(SERVICE_ROLE_KEY)) })
      )
    )
  })
).pipe(Layer.provide(NodeContext.layer), Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

/** Runs the CLI with the server's data dir; returns its last stdout line. */
const cli = (...args: Array<string>) =>
  Effect.flatMap(CandorConfig, ({ dataDir }) =>
    Effect.promise(async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], {
        cwd: tmpdir(),
        env: { ...process.env, CANDOR_DATA_DIR: dataDir, LOG_LEVEL: "error" }
      })
      return stdout.trim().split("\n").at(-1)!
    })
  )

const call = (path: string, init: RequestInit = {}) =>
  Effect.gen(function* () {
    const { address } = yield* HttpServer.HttpServer
    const response = yield* Effect.promise(() => fetch(`${HttpServer.formatAddress(address)}${path}`, init))
    return { status: response.status, body: yield* Effect.promise(() => response.json() as Promise<any>) }
  })

layer(TestServer, { excludeTestServices: true, timeout: "90 seconds" })("candor serve --role api", (it) => {
  it.effect(
    "a token from `candor token` calls the API; without it, 401",
    () =>
      Effect.gen(function* () {
        expect((yield* call("/v1/plans")).status).toBe(401)
        const token = yield* cli("token", "--sub", "alice", "--email", "alice@example.test")
        expect(token.split(".")).toHaveLength(3)
        const plans = yield* call("/v1/plans", { headers: { authorization: `Bearer ${token}` } })
        expect(plans.status).toBe(200)
        expect(plans.body.plans).toHaveLength(4)
        const svc = yield* call("/v1/admin/users/alice", {
          method: "PUT",
          headers: { authorization: `Bearer ${SERVICE_ROLE_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ plan_id: "team" })
        })
        expect(svc).toMatchObject({
          status: 200,
          body: { user_id: "alice", email: "alice@example.test", plan_id: "team" }
        })
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "a license from `candor license issue` validates against the served API",
    () =>
      Effect.gen(function* () {
        const token = yield* cli("token", "--sub", "bob")
        const license = yield* cli(
          "license",
          "issue",
          "--licensee",
          "Acme",
          "--plan",
          "team",
          "--days",
          "90",
          "--limits",
          '{"agents":500}'
        )
        expect(license).toMatch(/^cndl1\./)
        const res = yield* call("/v1/license/validate", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ license, instance_id: "host-1", instance_metadata: {} })
        })
        expect(res).toMatchObject({
          status: 200,
          body: { valid: true, plan_id: "team", limits: { agents: 500, requests_per_second: 200 } }
        })
      }),
    { timeout: 60_000 }
  )

  it.effect("/health/ready reports the store and the bus; /metrics answers", () =>
    Effect.gen(function* () {
      expect(yield* call("/health/ready")).toStrictEqual({
        status: 200,
        body: { status: "ready", checks: { store: "ok", bus: "ok" } }
      })
      const { address } = yield* HttpServer.HttpServer
      const metrics = yield* Effect.promise(() =>
        fetch(`${HttpServer.formatAddress(address)}/metrics`).then((r) => r.text())
      )
      expect(metrics).toContain("http_requests_total")
      expect(metrics).toContain("candor_checkpoints")
    })
  )
})
