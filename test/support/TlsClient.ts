/**
 * Raw TLS and HTTP probes of a server: the certificate a new connection is served, whether an old
 * protocol version is refused, and whether plain HTTP gets an answer on a TLS port.
 */
import { request as httpRequest } from "node:http"
import { connect } from "node:tls"

/** The fingerprint of the certificate a fresh connection to 127.0.0.1:port is served (trusting `ca`). */
export const servedFingerprint = (port: number, ca: Buffer): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256
      socket.end()
      resolve(fingerprint)
    })
    socket.once("error", reject)
  })

/**
 * Resolves once a TLS 1.0–1.1 client is refused by the server (its `protocol_version` alert);
 * rejects if the handshake succeeds or fails otherwise. The client lowers OpenSSL's security level
 * so that it does offer TLS 1.1 (against a server without a floor this handshake succeeds): the
 * refusal seen is the server's.
 */
export const tls11Refused = (port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: "127.0.0.1",
        port,
        minVersion: "TLSv1",
        maxVersion: "TLSv1.1",
        ciphers: "DEFAULT@SECLEVEL=0",
        rejectUnauthorized: false
      },
      () => {
        const protocol = socket.getProtocol()
        socket.destroy()
        reject(new Error(`a ${protocol} handshake succeeded`))
      }
    )
    socket.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION" ? resolve() : reject(error)
    )
  })

/** Resolves with how a plain HTTP request to a TLS port ended: never a status line. */
export const plainHttpFails = (port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/health/live", agent: false }, (res) => {
      res.resume()
      reject(new Error(`plain HTTP got status ${res.statusCode}`))
    })
    req.once("error", (error) => resolve(error.message))
    req.end()
  })
