/**
 * A self-signed P-256 certificate for localhost and 127.0.0.1, made at test time with the `openssl`
 * CLI (no key material in the repository). Each call makes a new key, so a reload is observable
 * by the certificate's fingerprint; the certificate is its own CA for clients (`ca: cert`).
 */
import { execFileSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface TestCertificate {
  readonly certFile: string
  readonly keyFile: string
  /** The PEM certificate: the CA clients trust. */
  readonly cert: Buffer
  /** SHA-256 fingerprint, as `tls.TLSSocket.getPeerCertificate().fingerprint256` gives it. */
  readonly fingerprint256: string
}

/** Writes `<name>.crt` and `<name>.key` into `dir`. */
export const makeCertificate = (dir: string, name = "server"): TestCertificate => {
  const certFile = join(dir, `${name}.crt`)
  const keyFile = join(dir, `${name}.key`)
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-days",
      "1",
      "-keyout",
      keyFile,
      "-out",
      certFile
    ],
    { stdio: "ignore" }
  )
  const cert = readFileSync(certFile)
  return { certFile, keyFile, cert, fingerprint256: new X509Certificate(cert).fingerprint256 }
}

/** A fresh temporary directory and its removal. */
export const tempDir = (): { readonly dir: string; readonly remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "candor-tls-"))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
