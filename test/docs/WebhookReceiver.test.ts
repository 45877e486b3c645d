/**
 * The receiver of docs/webhooks.md ("A receiver"), as a reader would use it: its code block is read
 * from the doc, put in an empty directory beside copies of core/WebhookSignature.ts and
 * core/Bytes.ts (all the doc says it needs), type-checked with this project's compiler options and
 * run with tsx. Deliveries signed by Candor (the webhook sender, through `signWebhook`) are answered
 * 204 and logged; a changed body, another secret and a stale timestamp are answered 400 and not logged.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { newEnvelope } from "../../core/Events.js"
import { signWebhook } from "../../core/WebhookSignature.js"
import * as WebhookSender from "../../adapters/webhooks/WebhookSender.js"
import { WebhookNetwork } from "../../adapters/webhooks/WebhookUrlGuard.js"
import { freePort } from "../support/NatsServer.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The doc's code block, with its port taken from `PORT` (the one change made to it). */
const receiverSource = (): string => {
  const doc = readFileSync(join(ROOT, "docs/webhooks.md"), "utf8")
  const section = doc.slice(doc.indexOf("## A receiver"))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  if (code === undefined) throw new Error('docs/webhooks.md has no ts code block under "## A receiver"')
  expect(code.split(".listen(3000)")).toHaveLength(2)
  return code.replace(".listen(3000)", ".listen(Number(process.env.PORT))")
}

/** An empty directory holding the receiver and the two files the doc says to copy. */
const receiverDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "candor-receiver-"))
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
    writeFileSync(join(dir, "receiver.ts"), receiverSource())
    for (const file of ["WebhookSignature.ts", "Bytes.ts"]) copyFileSync(join(ROOT, "core", file), join(dir, file))
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Type-checks `dir/receiver.ts` as this project compiles its own code; returns the source files it needed. */
const typeCheck = (dir: string) => {
  const { config } = ts.readConfigFile(join(ROOT, "tsconfig.json"), (path) => ts.sys.readFile(path))
  const { options } = ts.convertCompilerOptionsFromJson((config as { compilerOptions: unknown }).compilerOptions, ROOT)
  const program = ts.createProgram([join(dir, "receiver.ts")], {
    ...options,
    typeRoots: [join(ROOT, "node_modules/@types")],
    noEmit: true
  })
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
  const sources = program
    .getSourceFiles()
    .filter((file) => !file.isDeclarationFile)
    .map((file) => file.fileName.slice(dir.length + 1))
  return { diagnostics, sources }
}

/** The receiver running under tsx; its stdout lines as they come. Stopped when the scope closes. */
const runReceiver = (dir: string, port: number, secret: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [createRequire(import.meta.url).resolve("tsx/cli"), "receiver.ts"], {
        cwd: dir,
        env: { ...process.env, PORT: String(port), CANDOR_WEBHOOK_SECRET: secret },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const lines: Array<string> = []
      const errors: Array<string> = []
      createInterface({ input: child.stdout }).on("line", (line) => lines.push(line))
      createInterface({ input: child.stderr }).on("line", (line) => errors.push(line))
      return { child, lines, errors }
    }),
    // SIGTERM, which tsx relays to the node process it runs the receiver in, then waits for: a
    // SIGKILL stopped tsx alone and left that process running after the tests.
    ({ child }) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        const force = setTimeout(() => child.kill("SIGKILL"), 5_000)
        child.once("exit", () => {
          clearTimeout(force)
          resume(Effect.void)
        })
        child.kill("SIGTERM")
      })
  )

/** Succeeds once something accepts connections on the port. */
const accepting = (port: number) =>
  Effect.async<void, Error>((resume) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.void)
    })
    socket.once("error", (error) => resume(Effect.fail(error)))
  })

/** Polls `condition` until it holds (or fails after 20 s, saying what was seen). */
const until = (condition: () => boolean, what: () => string) =>
  Effect.suspend(() => (condition() ? Effect.void : Effect.fail(new Error(what())))).pipe(
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
  )

describe("docs/webhooks.md, A receiver", () => {
  it.scoped("compiles with only WebhookSignature.ts and Bytes.ts beside it", () =>
    Effect.gen(function* () {
      const dir = yield* receiverDir
      const { diagnostics, sources } = typeCheck(dir)
      expect(diagnostics).toEqual([])
      expect([...sources].sort()).toEqual(["Bytes.ts", "WebhookSignature.ts", "receiver.ts"])
    })
  )

  it.scopedLive(
    "accepts Candor's deliveries and refuses changed, foreign and stale ones",
    () =>
      Effect.gen(function* () {
        const dir = yield* receiverDir
        const port = yield* Effect.promise(freePort)
        const held = `whsec_${randomBytes(32).toString("base64url")}`
        const receiver = yield* runReceiver(dir, port, held)
        yield* accepting(port).pipe(
          Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("30 seconds"))),
          Effect.mapError(
            (error) => new Error(`receiver not listening: ${error.message}\n${receiver.errors.join("\n")}`)
          )
        )

        const envelope = newEnvelope({
          type: "agent.paused",
          source: "test",
          org_id: "org_receiver",
          agent_id: "agt-receiver",
          created_at: new Date(),
          data: {}
        })
        const body = JSON.stringify(envelope)
        const url = `http://127.0.0.1:${port}/hook`
        const post = (headers: Record<string, string>, sent = body) =>
          Effect.promise(() => fetch(url, { method: "POST", headers, body: sent }).then((response) => response.status))

        // Refused, and not logged: a body changed after signing, a secret the receiver does not
        // hold, a signature from ten minutes ago, no signature.
        const otherSecret = `whsec_${randomBytes(32).toString("base64url")}`
        const now = new Date()
        expect(yield* post({ ...signWebhook(held, body, now) }, body.replace("agent.paused", "agent.killed"))).toBe(400)
        expect(yield* post({ ...signWebhook(otherSecret, body, now) })).toBe(400)
        expect(yield* post({ ...signWebhook(held, body, new Date(now.getTime() - 600_000)) })).toBe(400)
        expect(yield* post({})).toBe(400)

        // Candor's sender during a rotation: the new secret first, the one the receiver holds second.
        const status = yield* WebhookSender.make().send({
          url,
          secrets: [otherSecret, held],
          body,
          event: envelope.type,
          deliveryId: envelope.id
        })
        expect(status).toBe(204)
        yield* until(
          () => receiver.lines.length > 0,
          () => `nothing logged; stderr:\n${receiver.errors.join("\n")}`
        )
        expect(receiver.lines).toEqual([`${envelope.id} agent.paused`])
      }).pipe(Effect.provideService(WebhookNetwork, { allowPrivate: true })),
    60_000
  )
})
