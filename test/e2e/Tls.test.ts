/**
 * `candor serve` as an operator runs it with TLS_CERT_FILE and TLS_KEY_FILE (embedded default, every
 * role): both servers answer over HTTPS and refuse TLS 1.1, the "listening" line names https URLs,
 * and a SIGHUP after the files are replaced in place makes both serve the new certificate to the
 * next connection, without a restart.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { request } from "node:https"
import { makeCertificate, tempDir } from "../support/TestCertificate.js"
import { servedFingerprint, tls11Refused } from "../support/TlsClient.js"
import { startServe } from "./ServeProcess.js"
import { poll } from "./Support.js"

const health = (url: string, ca: Buffer) =>
  Effect.async<{ status: number; body: string }, Error>((resume) => {
    const req = request(`${url}/health/live`, { ca, servername: "localhost", agent: false }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode!, body })))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
  })

layer(Layer.empty, { timeout: "120 seconds", excludeTestServices: true })("candor serve over HTTPS", (it) => {
  it.scoped(
    "serves HTTPS on both ports, refuses TLS 1.1, and reloads the certificate on SIGHUP",
    () =>
      Effect.gen(function* () {
        const tmp = yield* Effect.acquireRelease(Effect.sync(tempDir), (t) => Effect.sync(t.remove))
        const first = makeCertificate(tmp.dir)
        const serve = yield* startServe({ env: { TLS_CERT_FILE: first.certFile, TLS_KEY_FILE: first.keyFile } })
        const listening = JSON.parse(serve.output().find((line) => line.includes('"message":"listening"'))!)
        expect(listening.annotations.url).toBe(`https://127.0.0.1:${serve.port}`)
        expect(listening.annotations.gateway_url).toBe(`https://127.0.0.1:${serve.gatewayPort}`)
        expect(serve.output().join("\n")).not.toContain("plain HTTP")

        for (const url of [serve.apiUrl, serve.gatewayUrl]) {
          expect(yield* health(url, first.cert)).toStrictEqual({ status: 200, body: '{"status":"ok"}' })
        }
        for (const port of [serve.port, serve.gatewayPort]) {
          yield* Effect.promise(() => tls11Refused(port))
          expect(yield* Effect.promise(() => servedFingerprint(port, first.cert))).toBe(first.fingerprint256)
        }

        const second = makeCertificate(tmp.dir) // the same paths, as certbot or cert-manager replace them
        serve.signal("SIGHUP")
        yield* poll(
          Effect.sync(() => serve.output().filter((line) => line.includes("TLS certificate reloaded")).length),
          (n) => n === 2,
          "both servers reloaded",
          10_000
        )
        for (const port of [serve.port, serve.gatewayPort]) {
          expect(yield* Effect.promise(() => servedFingerprint(port, second.cert))).toBe(second.fingerprint256)
        }
        expect(yield* health(serve.gatewayUrl, second.cert)).toMatchObject({ status: 200 })
      }),
    // Two `candor serve` starts: seconds alone, far more on a loaded machine.
    120_000
  )
})
