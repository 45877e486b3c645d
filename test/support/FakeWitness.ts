/**
 * A transparency-log witness on 127.0.0.1, speaking c2sp.org/tlog-witness over real HTTP: the
 * stand-in for a witness of the public network, which is outside our control. `POST
 * /add-checkpoint` does what the spec asks, in its order: 400 for a malformed body, 404 for an
 * origin it does not know, 403 when no signature verifies with the log key it trusts, then
 * core/Cosignature.ts's `checkAddCheckpoint` against its record of the origin (400, 409 with its size
 * as `text/x.tlog.size`, 422), and on success records the checkpoint and answers its cosignature/v1
 * line, signed with its own key at its clock's time. Check and record happen in one synchronous
 * step, so two requests cannot roll its record back (the race the spec warns about).
 *
 * `misbehave` makes it answer what a broken or hostile witness would, for the tests of what Candor
 * must refuse to store.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import {
  checkAddCheckpoint,
  cosignLine,
  formatWitnessKey,
  parseAddCheckpoint,
  type WitnessKey
} from "../../core/Cosignature.js"
import { parseCheckpoint, parseNote, verifyCheckpointNote } from "../../core/Note.js"
import { generateSigningKey, type SigningKey } from "../../core/Signing.js"

export type Misbehaviour =
  /** A 200 whose body is not signature lines. */
  | "garbage"
  /** A well-formed cosignature line whose signature does not verify. */
  | "bad_signature"
  /** A cosignature by another key under the witness's name. */
  | "other_key"
  /** A valid cosignature dated a day ahead of its clock. */
  | "future"
  /** A 500. */
  | "error"

export interface FakeWitnessOptions {
  readonly name?: string
  /** The log key trusted for every origin starting with `originPrefix`. */
  readonly logKey: Uint8Array
  readonly originPrefix: string
  /** POSIX seconds; default: the real clock. */
  readonly now?: () => number
}

export interface FakeWitness {
  /** `http://127.0.0.1:<port>`: the submission prefix. */
  readonly url: string
  readonly key: WitnessKey
  /** The verifier key, `<name>+<hash>+<base64(0x04 ‖ key)>`. */
  readonly vkey: string
  /** `CANDOR_WITNESSES` entry: `<url> <vkey>`. */
  readonly entry: string
  /** Request bodies received, in order, and the status each was answered with. */
  readonly requests: ReadonlyArray<{ readonly body: string; readonly status: number }>
  /** Its record: origin → latest cosigned size. */
  readonly sizes: ReadonlyMap<string, number>
  /** Sets its record of an origin (a witness that saw another size, e.g. from another log instance). */
  readonly setRecord: (origin: string, size: number, root: Uint8Array) => void
  misbehave: Misbehaviour | undefined
  readonly close: () => Promise<void>
}

const MAX_BODY = 64 * 1024

export const startFakeWitness = async (options: FakeWitnessOptions): Promise<FakeWitness> => {
  const name = options.name ?? "witness.test/w1"
  const key: SigningKey = generateSigningKey()
  const impostor = generateSigningKey()
  const now = options.now ?? (() => Math.floor(Date.now() / 1000))
  const records = new Map<string, { size: number; root: Uint8Array }>()
  const requests: Array<{ body: string; status: number }> = []

  const answer = (body: string): { status: number; type: string; text: string } => {
    const plain = (status: number, text: string) => ({ status, type: "text/plain; charset=utf-8", text: `${text}\n` })
    if (witness.misbehave === "error") return plain(500, "internal error")
    const request = parseAddCheckpoint(body)
    if (typeof request === "string") return plain(400, request)
    const parsed = parseNote(request.note)
    if (typeof parsed === "string") return plain(400, parsed)
    const checkpoint = parseCheckpoint(parsed.text)
    if (checkpoint === undefined) return plain(400, "not a checkpoint")
    if (!checkpoint.origin.startsWith(options.originPrefix)) return plain(404, "unknown origin")
    const verified = verifyCheckpointNote(
      request.note,
      [{ name: checkpoint.origin, publicKey: options.logKey }],
      checkpoint.origin
    )
    if (verified === undefined) return plain(403, "no signature by a trusted log key")
    const check = checkAddCheckpoint(request, checkpoint, records.get(checkpoint.origin))
    if (check.status === 409) return { status: 409, type: "text/x.tlog.size", text: `${check.size}\n` }
    if (check.status !== 200) return plain(check.status, check.error)
    if (witness.misbehave === "garbage") return plain(200, "<html>cosigned!</html>")
    records.set(checkpoint.origin, { size: checkpoint.size, root: checkpoint.root })
    const time = witness.misbehave === "future" ? now() + 86_400 : now()
    const signer = witness.misbehave === "other_key" ? impostor : key
    let line = cosignLine(parsed.text, { name, key: signer }, time)
    if (witness.misbehave === "bad_signature")
      line = line.slice(0, -6) + (line.slice(-6, -5) === "A" ? "B" : "A") + line.slice(-5)
    return { status: 200, type: "text/plain; charset=utf-8", text: `${line}\n` }
  }

  const server = createServer((request, response) => {
    if (request.method !== "POST" || request.url !== "/add-checkpoint") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
      return
    }
    const chunks: Array<Buffer> = []
    let length = 0
    request.on("data", (chunk: Buffer) => {
      length += chunk.length
      if (length <= MAX_BODY) chunks.push(chunk)
    })
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const result = length > MAX_BODY ? { status: 413, type: "text/plain", text: "too large\n" } : answer(body)
      requests.push({ body, status: result.status })
      response.writeHead(result.status, { "content-type": result.type }).end(result.text)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const witnessKey: WitnessKey = { name, publicKey: key.publicKey }
  const vkey = formatWitnessKey(witnessKey)
  const witness: FakeWitness = {
    url,
    key: witnessKey,
    vkey,
    entry: `${url} ${vkey}`,
    requests,
    get sizes() {
      return new Map([...records].map(([origin, record]) => [origin, record.size]))
    },
    setRecord: (origin, size, root) => void records.set(origin, { size, root }),
    misbehave: undefined,
    // Idempotent: a test may stop it early (a witness gone away) and the scope close it again.
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve()
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      })
  }
  return witness
}
