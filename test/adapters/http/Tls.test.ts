/**
 * The TLS mechanics both servers share: files read and checked up front, TLS 1.2 as the floor, a
 * reload that swaps the certificate for new connections and keeps the old one when a file is bad,
 * and which bind addresses count as loopback.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { isLoopbackHost, loadTls, reloadTls, serverTlsOptions } from "../../../adapters/http/Tls.js"
import { makeCertificate, tempDir } from "../../support/TestCertificate.js"
import { plainHttpFails, servedFingerprint, tls11Refused } from "../../support/TlsClient.js"

const tmp = tempDir()
afterAll(tmp.remove)

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

describe("loadTls", () => {
  it.effect("reads a certificate and its key", () =>
    Effect.gen(function* () {
      const cert = makeCertificate(tmp.dir, "load")
      const material = yield* loadTls(cert)
      expect(material.cert.equals(cert.cert)).toBe(true)
      expect(serverTlsOptions(material).minVersion).toBe("TLSv1.2")
    })
  )

  it.effect("a missing file fails with its path", () =>
    Effect.gen(function* () {
      const cert = makeCertificate(tmp.dir, "missing")
      const error = yield* Effect.flip(loadTls({ certFile: cert.certFile, keyFile: join(tmp.dir, "nope.key") }))
      expect(error._tag).toBe("TlsFileError")
      expect(error.message).toContain("nope.key")
    })
  )

  it.effect("a key that does not match the certificate, or a file that is not PEM, fails", () =>
    Effect.gen(function* () {
      const a = makeCertificate(tmp.dir, "a")
      const b = makeCertificate(tmp.dir, "b")
      const mismatch = yield* Effect.flip(loadTls({ certFile: a.certFile, keyFile: b.keyFile }))
      expect(mismatch.message).toContain(a.certFile)
      const garbage = join(tmp.dir, "garbage.crt")
      writeFileSync(garbage, "not a certificate")
      yield* Effect.flip(loadTls({ certFile: garbage, keyFile: a.keyFile }))
    })
  )
})

describe("an https server with these options", () => {
  it.effect("refuses TLS 1.1 and plain HTTP; a reload swaps the certificate; a bad file keeps the old one", () =>
    Effect.gen(function* () {
      const first = makeCertificate(tmp.dir, "first")
      const server = createServer(serverTlsOptions(yield* loadTls(first)), (_req, res) => res.end("ok"))
      const port = yield* Effect.promise(() => listen(server))
      yield* Effect.addFinalizer(() => Effect.promise(() => new Promise((r) => server.close(r))))

      expect(yield* Effect.promise(() => servedFingerprint(port, first.cert))).toBe(first.fingerprint256)
      yield* Effect.promise(() => tls11Refused(port))
      yield* Effect.promise(() => plainHttpFails(port))

      // Rotation in place: the same paths, new contents.
      const second = makeCertificate(tmp.dir, "first")
      expect(second.fingerprint256).not.toBe(first.fingerprint256)
      yield* reloadTls(server, first)
      expect(yield* Effect.promise(() => servedFingerprint(port, second.cert))).toBe(second.fingerprint256)
      yield* Effect.promise(() => tls11Refused(port))

      writeFileSync(second.keyFile, "truncated")
      const failed = yield* Effect.flip(reloadTls(server, first))
      expect(failed._tag).toBe("TlsFileError")
      expect(yield* Effect.promise(() => servedFingerprint(port, second.cert))).toBe(second.fingerprint256)
    }).pipe(Effect.scoped)
  )
})

describe("the TLS 1.1 probe", () => {
  it.effect("succeeds against a server that allows TLS 1.1, so its refusals are the server's", () =>
    Effect.gen(function* () {
      const cert = makeCertificate(tmp.dir, "old")
      const server = createServer({
        ...serverTlsOptions(yield* loadTls(cert)),
        minVersion: "TLSv1",
        ciphers: "DEFAULT@SECLEVEL=0"
      })
      const port = yield* Effect.promise(() => listen(server))
      yield* Effect.addFinalizer(() => Effect.promise(() => new Promise((r) => server.close(r))))
      const error = yield* Effect.flip(Effect.tryPromise(() => tls11Refused(port)))
      expect(String(error.cause)).toContain("TLSv1.1 handshake succeeded")
    }).pipe(Effect.scoped)
  )
})

describe("isLoopbackHost", () => {
  it("loopback names and addresses only", () => {
    for (const host of ["127.0.0.1", "127.0.0.53", "::1", "[::1]", "localhost", "LOCALHOST"])
      expect(isLoopbackHost(host), host).toBe(true)
    for (const host of ["0.0.0.0", "::", "10.0.0.4", "192.168.1.2", "candor.internal", "128.0.0.1"])
      expect(isLoopbackHost(host), host).toBe(false)
  })
})
