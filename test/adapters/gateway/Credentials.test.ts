/**
 * One credential per request, at the module (`readCredential`) over every provider's carriers: the
 * refusals (two carriers, a repeated one, a comma-joined value, an unreadable bearer), the hash of the
 * one credential (the adapter's own), and a property: it never throws, and whatever it accepts names
 * exactly one carrier whose credential hashes as the adapter hashes it.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { IncomingHttpHeaders } from "node:http"
import { readCredential } from "../../../adapters/gateway/Credentials.js"
import { anthropicAdapter } from "../../../adapters/providers/Anthropic.js"
import { geminiAdapter } from "../../../adapters/providers/Gemini.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { openaiAdapter } from "../../../adapters/providers/OpenAi.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const URL_PLAIN = new URL("https://x.test/v1/messages")
const KEY = "sk-ant-api03-SECRET"

/** Node's view of a raw header list: names lowercased, repeats joined by ", " (Authorization: the first only). */
const parse = (raw: ReadonlyArray<string>): IncomingHttpHeaders => {
  const headers: Record<string, string> = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase()
    const value = raw[i + 1]!
    if (headers[name] === undefined) headers[name] = value
    else if (name !== "authorization") headers[name] = `${headers[name]}, ${value}`
  }
  return headers
}

const read = (adapter: typeof anthropicAdapter, raw: ReadonlyArray<string>, url = URL_PLAIN) =>
  readCredential(adapter.credentials, parse(raw), raw, url)

describe("readCredential", () => {
  it("one credential in any of the provider's carriers: its hash, the adapter's", () => {
    const hash = sha256Hex(KEY)
    expect(read(anthropicAdapter, ["X-Api-Key", KEY])).toEqual({ _tag: "one", keyHash: hash })
    expect(read(anthropicAdapter, ["Authorization", `Bearer ${KEY}`])).toEqual({ _tag: "one", keyHash: hash })
    expect(read(openaiAdapter, ["authorization", `bearer ${KEY}`])).toEqual({ _tag: "one", keyHash: hash })
    expect(read(geminiAdapter, ["x-goog-api-key", KEY])).toEqual({ _tag: "one", keyHash: hash })
    const query = (q: string) => new URL(`https://x.test/v1beta/models/m:generateContent?${q}`)
    expect(read(geminiAdapter, [], query(`key=${KEY}`))).toEqual({ _tag: "one", keyHash: hash })
    expect(read(geminiAdapter, [], query(`access_token=${KEY}&alt=sse`))).toEqual({ _tag: "one", keyHash: hash })
    expect(read(geminiAdapter, ["Authorization", `Bearer ${KEY}`])).toEqual({ _tag: "one", keyHash: hash })
  })

  it("no carrier, or an empty one: none (forwarded unattributed; the provider answers 401)", () => {
    expect(read(anthropicAdapter, ["content-type", "application/json"])._tag).toBe("none")
    expect(read(anthropicAdapter, ["x-api-key", ""])._tag).toBe("none")
    // Another provider's carrier is not this one's credential.
    expect(read(openaiAdapter, ["x-api-key", KEY])._tag).toBe("none")
  })

  it("refuses two carriers, a repeated carrier, a comma-joined value and an unreadable bearer, naming them", () => {
    const refused = (result: ReturnType<typeof read>) => (result._tag === "refused" ? result.error : result._tag)
    expect(refused(read(anthropicAdapter, ["x-api-key", KEY, "authorization", `Bearer ${KEY}`]))).toBe(
      "more than one credential (x-api-key, authorization): send exactly one"
    )
    expect(refused(read(anthropicAdapter, ["x-api-key", KEY, "X-API-KEY", "other"]))).toContain("x-api-key")
    expect(refused(read(anthropicAdapter, ["x-api-key", "", "x-api-key", KEY]))).toContain("more than one")
    expect(refused(read(openaiAdapter, ["authorization", `Bearer ${KEY}`, "Authorization", "Bearer other"]))).toContain(
      "authorization"
    )
    expect(refused(read(anthropicAdapter, ["x-api-key", `${KEY},other`]))).toBe("x-api-key: one credential, not a list")
    expect(refused(read(openaiAdapter, ["authorization", `Basic ${KEY}`]))).toContain(
      "not a credential Candor can read"
    )
    const both = new URL(`https://x.test/v1beta/models/m:generateContent?key=${KEY}&key=${KEY}`)
    expect(refused(read(geminiAdapter, [], both))).toContain("?key=")
    expect(refused(read(geminiAdapter, ["x-goog-api-key", KEY], new URL(`${both.origin}/?access_token=t`)))).toBe(
      "more than one credential (x-goog-api-key, ?access_token=): send exactly one"
    )
  })

  it("never throws; whatever it accepts is one carrier's credential, hashed as the adapter hashes it", () => {
    const names = ["x-api-key", "X-Api-Key", "authorization", "x-goog-api-key", "content-type"]
    const values = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: "grapheme-ascii", maxLength: 40 }).map((token) => `Bearer ${token}`),
      fc.constantFrom("", " ", ",", "Bearer", "bearer  k", "k1, k2")
    )
    fc.assert(
      fc.property(
        fc.constantFrom(anthropicAdapter, openaiAdapter, geminiAdapter),
        fc.array(fc.tuple(fc.constantFrom(...names), values), { maxLength: 4 }),
        fc.array(fc.tuple(fc.constantFrom("key", "access_token", "alt"), fc.string({ maxLength: 12 })), {
          maxLength: 3
        }),
        (adapter, pairs, query) => {
          const raw = pairs.flat()
          const url = new URL("https://x.test/v1beta/models/m:generateContent")
          for (const [name, value] of query) url.searchParams.append(name, value)
          const result = read(adapter, raw, url)
          if (result._tag !== "one") return
          const headers = parse(raw)
          expect(adapter.keyHash({ get: (name) => headers[name]?.toString() ?? null }, url)).toBe(result.keyHash)
        }
      ),
      fuzzParameters(2_000)
    )
  })
})
