/**
 * The gateway's one decoder of content codings (issue 24): which codings it reads, what a client's
 * Accept-Encoding becomes upstream (hostile headers included, in linear time), whole bodies decoded
 * within the bound, and the same bytes decoded alike whole (held path) and streamed (observed path).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib"
import {
  acceptEncodingForUpstream,
  codingOf,
  decodeBody,
  MAX_DECODED_BYTES
} from "../../../adapters/gateway/ContentCoding.js"
import { decodingObserver } from "../../../adapters/gateway/DecodingObserver.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const decodeWhole = (encoding: string | undefined, bytes: Uint8Array) =>
  Effect.runPromise(decodeBody(codingOf(encoding), bytes))

const decodeStreamed = (encoding: string | undefined, chunks: ReadonlyArray<Uint8Array>) =>
  new Promise<{ readonly bytes: Buffer; readonly undecodable: boolean }>((resolve) => {
    const out: Array<Buffer> = []
    const observer = decodingObserver(encoding, {
      chunk: (bytes) => void out.push(Buffer.from(bytes)),
      end: (_outcome, undecodable) => resolve({ bytes: Buffer.concat(out), undecodable: undecodable === true })
    })
    for (const chunk of chunks) observer.chunk(chunk)
    observer.end({ kind: "complete", status: 200, bytes: 0, cause: undefined })
  })

describe("codingOf", () => {
  it("names the coding the gateway decodes, identity, or unsupported", () => {
    expect(codingOf(undefined)).toBe("identity")
    expect(codingOf("identity")).toBe("identity")
    expect(codingOf(" GZIP ")).toBe("gzip")
    expect(codingOf("x-gzip")).toBe("gzip")
    expect(codingOf("deflate")).toBe("deflate")
    expect(codingOf("br")).toBe("br")
    expect(codingOf("gzip, identity")).toBe("gzip")
    expect(codingOf(["br"])).toBe("br")
    expect(codingOf("zstd")).toBe("unsupported")
    expect(codingOf("gzip, br")).toBe("unsupported") // stacked
    expect(codingOf(["gzip", "gzip"])).toBe("unsupported")
  })
})

describe("acceptEncodingForUpstream", () => {
  it("keeps what the gateway decodes, drops the rest, and asks for identity otherwise", () => {
    expect(acceptEncodingForUpstream("gzip, deflate")).toBe("gzip, deflate")
    expect(acceptEncodingForUpstream("gzip;q=1.0, identity; q=0.5")).toBe("gzip;q=1.0, identity; q=0.5")
    expect(acceptEncodingForUpstream("br, zstd, compress")).toBe("br")
    expect(acceptEncodingForUpstream("ZSTD;q=1, GZIP;q=0.2")).toBe("gzip;q=0.2")
    expect(acceptEncodingForUpstream("*")).toBe("gzip, deflate, br")
    expect(acceptEncodingForUpstream("*;q=0, zstd")).toBe("identity")
    expect(acceptEncodingForUpstream("")).toBe("identity")
    expect(acceptEncodingForUpstream(undefined)).toBe("identity")
  })

  it("whatever the client sends, the provider is asked only for codings the gateway decodes (fast-check)", () => {
    const token = fc.constantFrom(
      "gzip",
      "x-gzip",
      "deflate",
      "br",
      "identity",
      "zstd",
      "compress",
      "*",
      "GZip",
      "",
      " "
    )
    const member = fc.tuple(token, fc.option(fc.constantFrom(";q=0", ";q=0.5", "; q=1", ";level=9"), { nil: "" }))
    fc.assert(
      fc.property(fc.array(member, { maxLength: 12 }), fc.constantFrom(", ", ",", " , "), (members, separator) => {
        const header = members.map(([t, q]) => `${t}${q}`).join(separator)
        const forwarded = acceptEncodingForUpstream(header)
        for (const part of forwarded.split(",")) {
          const name = part.split(";")[0]!.trim().toLowerCase()
          expect(["gzip", "x-gzip", "deflate", "br", "identity"]).toContain(name)
        }
      }),
      fuzzParameters(500)
    )
  })

  it("a hostile header of Node's maximum size costs linear time", () => {
    const hostile = "gzip" + " ".repeat(16_000) + ",".repeat(8_000) + "x"
    // The fastest of five runs: a quadratic cost (seconds at this size) shows in every run, while one
    // run paused by the scheduler or the collector on a loaded machine (a test worker per core) does
    // not fail the test (a single run once took 83 ms so).
    let fastestMs = Number.POSITIVE_INFINITY
    for (let run = 0; run < 5; run++) {
      const started = process.hrtime.bigint()
      expect(acceptEncodingForUpstream(hostile)).toBe("gzip")
      fastestMs = Math.min(fastestMs, Number(process.hrtime.bigint() - started) / 1e6)
    }
    expect(fastestMs).toBeLessThan(50)
  })
})

describe("decoding, whole and streamed alike", () => {
  const text = JSON.stringify({ content: [{ type: "thinking", thinking: "x".repeat(5000) }] })
  const encoded: ReadonlyArray<readonly [string, string, Buffer]> = [
    ["gzip", "gzip", gzipSync(text)],
    ["deflate", "deflate", deflateSync(text)],
    ["raw deflate", "deflate", deflateRawSync(text)],
    ["br", "br", brotliCompressSync(text)]
  ]
  for (const [name, encoding, bytes] of encoded) {
    it(`${name}: the same text, whole or in any chunks`, async () => {
      expect(Buffer.from((await decodeWhole(encoding, bytes))!).toString()).toBe(text)
      // A lone first byte (DEFLATE's header needs two to tell raw from wrapped).
      const split = await decodeStreamed(encoding, [bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])
      expect(split).toEqual({ bytes: Buffer.from(text), undecodable: false })
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: bytes.byteLength - 1 }), { maxLength: 6 }),
          async (cuts) => {
            const points = [...new Set(cuts)].sort((a, b) => a - b)
            const chunks = [0, ...points].map((start, i) => bytes.subarray(start, points[i] ?? bytes.byteLength))
            const streamed = await decodeStreamed(encoding, chunks)
            expect(streamed).toEqual({ bytes: Buffer.from(text), undecodable: false })
          }
        ),
        fuzzParameters(40)
      )
    })
  }

  it("a compression bomb is undecodable on both paths, never inflated past the bound", async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_DECODED_BYTES + 1, 0x20))
    expect(await decodeWhole("gzip", bomb)).toBeUndefined()
    const streamed = await decodeStreamed("gzip", [bomb])
    expect(streamed.undecodable).toBe(true)
    expect(streamed.bytes.byteLength).toBeLessThanOrEqual(MAX_DECODED_BYTES)
  })

  it("an unsupported or corrupt coding is undecodable on both paths", async () => {
    for (const [encoding, bytes] of [
      ["zstd", Buffer.from("abc")],
      ["gzip", Buffer.from("not gzip at all, just text")]
    ] as const) {
      expect(await decodeWhole(encoding, bytes)).toBeUndefined()
      expect((await decodeStreamed(encoding, [bytes])).undecodable).toBe(true)
    }
  })
})
