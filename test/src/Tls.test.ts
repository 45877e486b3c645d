/**
 * `candor serve`'s transport settings: TLS_CERT_FILE and TLS_KEY_FILE both or neither, the API
 * server over HTTPS (TLS 1.1 and plain HTTP refused), and the one warning per server when a
 * non-loopback bind serves plain HTTP.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as HttpServer from "@effect/platform/HttpServer"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { request } from "node:https"
import { join } from "node:path"
import { config, layer as configLayer, tlsFiles } from "../../src/Config.js"
import { plainHttpWarning } from "../../src/http/PlainHttpWarning.js"
import { ServeLive } from "../../src/Serve.js"
import { makeCertificate, tempDir } from "../support/TestCertificate.js"
import { plainHttpFails, servedFingerprint, tls11Refused } from "../support/TlsClient.js"

const tmp = tempDir()
afterAll(tmp.remove)
const cert = makeCertificate(tmp.dir)

const decode = (env: Record<string, string>) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("TLS settings", () => {
  it.effect("both files: HTTPS; neither: plain HTTP", () =>
    Effect.gen(function* () {
      const both = yield* decode({ TLS_CERT_FILE: "/etc/candor/tls.crt", TLS_KEY_FILE: "/etc/candor/tls.key" })
      expect(tlsFiles(both)).toStrictEqual({ certFile: "/etc/candor/tls.crt", keyFile: "/etc/candor/tls.key" })
      const neither = yield* decode({ TLS_CERT_FILE: "" })
      expect(neither.tlsCertFile).toStrictEqual(Option.none())
      expect(tlsFiles(neither)).toBeUndefined()
    })
  )

  it.effect("one without the other is a configuration error naming the missing one", () =>
    Effect.gen(function* () {
      const noKey = String(yield* Effect.flip(decode({ TLS_CERT_FILE: "/etc/candor/tls.crt" })))
      expect(noKey).toContain("TLS_KEY_FILE is not set but TLS_CERT_FILE is")
      const noCert = String(yield* Effect.flip(decode({ TLS_KEY_FILE: "/etc/candor/tls.key" })))
      expect(noCert).toContain("TLS_CERT_FILE is not set but TLS_KEY_FILE is")
    })
  )
})

describe("plainHttpWarning", () => {
  it("warns for a non-loopback bind without TLS, naming both settings", () => {
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "candor.internal"]) {
      const warning = plainHttpWarning("gateway", host, false)
      expect(warning, host).toContain("TLS_CERT_FILE")
      expect(warning, host).toContain("TLS_KEY_FILE")
      expect(warning, host).toContain("gateway")
      expect(plainHttpWarning("api", host, true), host).toBeUndefined()
    }
    for (const host of ["127.0.0.1", "::1", "localhost"]) expect(plainHttpWarning("api", host, false)).toBeUndefined()
  })
})

const https = (port: number, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, ca: cert.cert, servername: "localhost", agent: false },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resolve({ status: res.statusCode!, body }))
      }
    )
    req.on("error", reject)
    req.end()
  })

const TlsServer = ServeLive(["api"])
  .pipe(
    Layer.provideMerge(
      configLayer({
        port: 0,
        dataDir: join(tmp.dir, "data-api"),
        tlsCertFile: Option.some(cert.certFile),
        tlsKeyFile: Option.some(cert.keyFile)
      })
    )
  )
  .pipe(Layer.provide(NodeContext.layer), Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

layer(TlsServer, { excludeTestServices: true, timeout: "60 seconds" })("the API server with TLS", (it) => {
  it.effect("answers over HTTPS with the configured certificate; refuses TLS 1.1 and plain HTTP", () =>
    Effect.gen(function* () {
      const { address } = yield* HttpServer.HttpServer
      if (address._tag !== "TcpAddress") throw new Error("not TCP")
      const res = yield* Effect.promise(() => https(address.port, "/health/live"))
      expect(res).toStrictEqual({ status: 200, body: '{"status":"ok"}' })
      expect(yield* Effect.promise(() => servedFingerprint(address.port, cert.cert))).toBe(cert.fingerprint256)
      yield* Effect.promise(() => tls11Refused(address.port))
      yield* Effect.promise(() => plainHttpFails(address.port))
    })
  )
})

describe("a non-loopback bind without TLS", () => {
  it.live("logs one warning per server", () =>
    Effect.gen(function* () {
      const warnings: Array<{ message: unknown; server: unknown }> = []
      const capture = Logger.make(({ annotations, logLevel, message }) => {
        if (logLevel._tag === "Warning")
          warnings.push({
            message: Array.isArray(message) ? message.join(" ") : message,
            server: Option.getOrUndefined(HashMap.get(annotations, "server"))
          })
      })
      // Built (both servers bound, the warnings logged), then released.
      yield* Layer.build(ServeLive(["gateway"])).pipe(
        Effect.scoped,
        Effect.provide(configLayer({ host: "0.0.0.0", port: 0, gatewayPort: 0, dataDir: join(tmp.dir, "data-gw") })),
        Effect.provide(NodeContext.layer),
        Effect.provide(Logger.replace(Logger.defaultLogger, capture))
      )
      expect(warnings.map((w) => w.server).sort()).toStrictEqual(["api", "gateway"])
      for (const w of warnings) expect(String(w.message)).toContain("TLS_CERT_FILE and TLS_KEY_FILE")
    })
  )
})
