/**
 * core/Cosignature.ts: cosignature/v1 (c2sp.org/tlog-cosignature) against a real checkpoint
 * cosigned by four public witnesses, keys and lines of our own under tampering, and the
 * add-checkpoint messages and checks of c2sp.org/tlog-witness.
 */
import { describe, expect, it } from "vitest"
import { concatBytes, fromBase64, toBase64, toHex, utf8 } from "../../core/Bytes.js"
import {
  addCosignatures,
  checkAddCheckpoint,
  cosignatureKeyHash,
  cosignedMessage,
  cosignLine,
  formatAddCheckpoint,
  formatWitnessKey,
  parseAddCheckpoint,
  parseCosignatureLines,
  parseTlogSize,
  parseWitnessKey,
  verifyCosignatures,
  verifyWitnessQuorum,
  type WitnessKey
} from "../../core/Cosignature.js"
import { leafHash, MemoryMerkleLog } from "../../core/Merkle.js"
import {
  appendSignatureLines,
  formatCheckpoint,
  parseCheckpoint,
  signNote,
  verifyCheckpointNote,
  verifyNote
} from "../../core/Note.js"
import { generateSigningKey, verifySignature } from "../../core/Signing.js"

const mustKey = (vkey: string): WitnessKey => {
  const key = parseWitnessKey(vkey)
  if (typeof key === "string") throw new Error(`test witness key did not parse: ${key}`)
  return key
}

/**
 * A real checkpoint of the Certificate Transparency log arche2025h1.staging.ct.transparency.dev,
 * cosigned by four witnesses of the public witness network, with the witnesses' published verifier
 * keys (also the keys of transparency-dev/formats' note tests for remora.n621.de). The log's own
 * lines are of other types (0x05 RFC 6962 STH, 0x01 Ed25519): ignored here, as the spec says.
 */
const real = {
  body: "arche2025h1.staging.ct.transparency.dev\n1432088532\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n",
  signatures: [
    "— arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=",
    "— arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=",
    "— transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==",
    "— witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==",
    "— remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==",
    "— witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg=="
  ],
  witnesses: [
    "transparency.dev/DEV:witness-little-garden+d8042a87+BCtusOxINQNUTN5Oj8HObRkh2yHf/MwYaGX4CPdiVEPM",
    "witness1.smartit.nu/witness1+a48c820f+BPSFWg9G6KPiO7QPryYO5Xq4oYJJ+kAvLKLSimDhoxMO",
    "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2",
    "witness.stagemole.eu+67f7aea0+BEqSG3yu9YrmcM3BHvQYTxwFj3uSWakQepafafpUqklv"
  ],
  timestamp: 1779573024
}
const realNote = `${real.body}\n${real.signatures.join("\n")}\n`

describe("cosignature/v1 on a real cosigned checkpoint", () => {
  it("verifies all four witnesses, with the time they signed", () => {
    const witnesses = real.witnesses.map(mustKey)
    const verified = verifyWitnessQuorum(realNote, witnesses)
    expect(verified.ok).toBe(true)
    if (!verified.ok) return
    expect(verified.cosignatures.map((c) => [c.witness.name, c.timestamp])).toEqual(
      witnesses.map((w) => [w.name, real.timestamp])
    )
    expect(verified.checkpoint.size).toBe(1432088532)
  })

  it("a changed size, root or extension line fails every cosignature", () => {
    const changed = [
      realNote.replace("1432088532", "1432088533"),
      realNote.replace("U7WM79jr", "U7WM79js"),
      realNote.replace(real.body, `${real.body}extension\n`)
    ]
    for (const note of changed) {
      for (const vkey of real.witnesses) {
        const result = verifyCosignatures(note, [mustKey(vkey)])
        expect(result.ok).toBe(false)
        if (!result.ok) expect(result.error).toContain("invalid cosignature by")
      }
    }
  })

  it("the key hash is SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4], as the published keys carry it", () => {
    for (const vkey of real.witnesses) {
      const key = mustKey(vkey)
      expect(formatWitnessKey(key)).toBe(vkey)
      const [, hash] = vkey.split("+")
      expect(toHex(cosignatureKeyHash(key.name, key.publicKey))).toBe(hash)
    }
  })

  it("the line carries key hash, 8-byte big-endian timestamp and signature over the documented message", () => {
    const line = real.signatures[4]!
    const bytes = fromBase64(line.split(" ")[2]!)!
    expect(bytes.length).toBe(76)
    expect(toHex(bytes.subarray(0, 4))).toBe("da77ade7")
    expect(new DataView(bytes.buffer, bytes.byteOffset + 4, 8).getBigUint64(0)).toBe(BigInt(real.timestamp))
    const message = cosignedMessage(real.body, real.timestamp)
    expect(new TextDecoder().decode(message)).toBe(`cosignature/v1\ntime ${real.timestamp}\n${real.body}`)
    expect(verifySignature(mustKey(real.witnesses[2]!).publicKey, message, bytes.subarray(12))).toBe(true)
  })
})

describe("witness verifier keys", () => {
  it.each([
    ["no parts", "remora.n621.de", "<name>+<key hash>+<base64 key>"],
    ["bad hash", "remora.n621.de+da77ade+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2", "8 hex digits"],
    ["wrong hash", "remora.n621.de+00000000+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2", "does not match"],
    ["another name", "remora.n621.se+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2", "does not match"],
    // transparency-dev/formats' test key of type 0x01 (its base64 holds a "+"): not a witness key here.
    ["type 0x01", "TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6", "type 0x04"],
    ["not base64", "rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!", "base64"],
    ["short key", "x+12345678+BAEC", "32 bytes"],
    ["space in name", "a b+12345678+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2", "invalid witness name"]
  ])("refuses %s", (_, vkey, reason) => {
    const parsed = parseWitnessKey(vkey)
    expect(typeof parsed).toBe("string")
    expect(parsed).toContain(reason)
  })

  it("accepts surrounding whitespace and uppercase hex, and formats back canonically", () => {
    const key = mustKey("  remora.n621.de+DA77ADE7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2\n")
    expect(formatWitnessKey(key)).toBe(real.witnesses[2])
  })
})

describe("cosigning Candor's checkpoints", () => {
  const log = generateSigningKey()
  const origin = "candor.test/agents/agt-1"
  const body = formatCheckpoint({ origin, size: 3, root: new Uint8Array(32).fill(7), extensions: [] })
  const note = signNote(body, { name: origin, key: log })
  const witnessKey = generateSigningKey()
  const witness: WitnessKey = { name: "witness.test/w1", publicKey: witnessKey.publicKey }
  const line = cosignLine(body, { name: witness.name, key: witnessKey }, 1_700_000_000)
  const cosigned = addCosignatures(note, [line])!

  it("a cosigned note verifies by the witness, and still by the log key alone (unknown lines ignored)", () => {
    const verified = verifyWitnessQuorum(cosigned, [witness])
    expect(verified.ok && verified.cosignatures.map((c) => c.timestamp)).toEqual([1_700_000_000])
    expect(verifyNote(cosigned, [{ name: origin, publicKey: log.publicKey }])).toMatchObject({
      ok: true,
      verifiedBy: [origin]
    })
    expect(verifyCheckpointNote(cosigned, [{ name: origin, publicKey: log.publicKey }], origin)?.size).toBe(3)
  })

  it("every changed byte of the cosignature fails the quorum", () => {
    const [prefix, name, encoded] = line.split(" ")
    const bytes = fromBase64(encoded!)!
    for (let i = 0; i < bytes.length; i++) {
      const changed = bytes.slice()
      changed[i] = changed[i]! ^ 0x01
      const tampered = addCosignatures(note, [`${prefix} ${name} ${toBase64(changed)}`])!
      expect(verifyWitnessQuorum(tampered, [witness]).ok, `byte ${i}`).toBe(false)
    }
  })

  it("every changed character of the checkpoint text fails the cosignature", () => {
    for (let i = 0; i < body.length; i++) {
      const char = body[i] === "\n" ? "\n" : body[i] === "A" ? "B" : "A"
      if (char === "\n") continue
      const tampered = cosigned.slice(0, i) + char + cosigned.slice(i + 1)
      expect(verifyWitnessQuorum(tampered, [witness]).ok, `character ${i}`).toBe(false)
    }
  })

  it("a wrong witness key (same name) finds no cosignature; a wrong time does not verify", () => {
    const other: WitnessKey = { name: witness.name, publicKey: generateSigningKey().publicKey }
    const wrongKey = verifyWitnessQuorum(cosigned, [other])
    expect(wrongKey).toMatchObject({ ok: false })
    if (!wrongKey.ok)
      expect(wrongKey.error).toContain(`none by ${formatWitnessKey(other).split("+").slice(0, 2).join("+")}`)
    // The same signature under another time line.
    const bytes = fromBase64(line.split(" ")[2]!)!
    const retimed = concatBytes(bytes.subarray(0, 4), new Uint8Array(8), bytes.subarray(12))
    new DataView(retimed.buffer).setBigUint64(4, 1_700_000_001n)
    const wrongTime = addCosignatures(note, [`— ${witness.name} ${toBase64(retimed)}`])!
    expect(verifyWitnessQuorum(wrongTime, [witness])).toMatchObject({ ok: false })
  })

  it("refuses cosignatures dated after notAfter", () => {
    expect(verifyCosignatures(cosigned, [witness], { notAfter: 1_699_999_999 })).toMatchObject({ ok: false })
    expect(verifyCosignatures(cosigned, [witness], { notAfter: 1_700_000_000 })).toMatchObject({ ok: true })
  })

  it("adding the same line twice adds it once; two different lines by one witness are a malformed note", () => {
    expect(addCosignatures(cosigned, [line, line])).toBe(cosigned)
    const second = cosignLine(body, { name: witness.name, key: witnessKey }, 1_700_000_500)
    expect(addCosignatures(cosigned, [second])).toBeUndefined()
    expect(appendSignatureLines(cosigned, [second])).toBeUndefined()
    const twice = `${cosigned}${second}\n`
    expect(verifyWitnessQuorum(twice, [witness])).toMatchObject({ ok: false })
  })

  it("quorum: 1 of 2 passes with quorum 1, fails with 2 naming the missing witness", () => {
    const absent: WitnessKey = { name: "witness.test/w2", publicKey: generateSigningKey().publicKey }
    expect(verifyWitnessQuorum(cosigned, [witness, absent], 1).ok).toBe(true)
    const both = verifyWitnessQuorum(cosigned, [witness, absent])
    expect(both.ok).toBe(false)
    if (!both.ok) expect(both.error).toContain("witness.test/w2+")
  })

  it("cosignLine refuses what is not a checkpoint or a bad timestamp", () => {
    const cosigner = { name: witness.name, key: witnessKey }
    expect(() => cosignLine("not a checkpoint\n", cosigner, 1)).toThrow(RangeError)
    expect(() => cosignLine(body, cosigner, -1)).toThrow(RangeError)
    expect(() => cosignLine(body, cosigner, 2 ** 53)).toThrow(RangeError)
  })

  it("a timestamp above 2^53 - 1 is refused on verification", () => {
    const bytes = fromBase64(line.split(" ")[2]!)!
    const huge = bytes.slice()
    new DataView(huge.buffer).setBigUint64(4, 2n ** 62n)
    expect(verifyCosignatures(addCosignatures(note, [`— ${witness.name} ${toBase64(huge)}`])!, [witness]).ok).toBe(
      false
    )
  })
})

describe("tlog-witness add-checkpoint", () => {
  // The example request body of c2sp.org/tlog-witness.
  const specBody = [
    "old 20852014",
    "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=",
    "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=",
    "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=",
    "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=",
    "",
    "example.com/behind-the-sofa",
    "20852163",
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=",
    "",
    "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=",
    ""
  ].join("\n")

  it("parses the spec's example and formats it back byte for byte", () => {
    const parsed = parseAddCheckpoint(specBody)
    if (typeof parsed === "string") throw new Error(parsed)
    expect(parsed.oldSize).toBe(20852014)
    expect(parsed.proof.length).toBe(4)
    expect(parseCheckpoint(parsed.note.slice(0, parsed.note.indexOf("\n\n") + 1))?.size).toBe(20852163)
    expect(formatAddCheckpoint(parsed)).toBe(specBody)
  })

  it("formats old 0 with no proof lines", () => {
    expect(formatAddCheckpoint({ oldSize: 0, proof: [], note: "n\n\n— x AAAA\n" })).toBe("old 0\n\nn\n\n— x AAAA\n")
    expect(() => formatAddCheckpoint({ oldSize: 1, proof: Array(64).fill(new Uint8Array(32)), note: "" })).toThrow(
      RangeError
    )
  })

  it.each([
    ["no blank line", "old 1\n", "empty line"],
    ["no old line", "older 1\n\nx", "old <size>"],
    ["leading zero", "old 01\n\nx", "leading zeros"],
    ["proof not 32 bytes", "old 1\nAAAA\n\nx", "SHA-256"],
    ["64 proof lines", `old 1\n${`${toBase64(new Uint8Array(32))}\n`.repeat(64)}\nx`, "63"]
  ])("refuses a body with %s", (_, body, reason) => {
    expect(parseAddCheckpoint(body)).toContain(reason)
  })

  it("parses responses: the spec's example cosignature lines, 409 sizes", () => {
    const response = [
      "— witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrdk3DXDqI5G2HgLatVs0pWh6Up69HVOw==",
      "— witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==",
      ""
    ].join("\n")
    expect(parseCosignatureLines(response)?.length).toBe(2)
    expect(parseCosignatureLines("")).toBeUndefined()
    expect(parseCosignatureLines("— a AAAAAAAA")).toBeUndefined()
    expect(parseCosignatureLines("<html>oops</html>\n")).toBeUndefined()
    expect(parseTlogSize("20852014\n")).toBe(20852014)
    expect(parseTlogSize("20852014")).toBeUndefined()
    expect(parseTlogSize("-1\n")).toBeUndefined()
  })

  it("checks as a witness must: 400, 409 with its size, 422, equal-size roots", () => {
    const log = new MemoryMerkleLog()
    for (let i = 0; i < 7; i++) log.append(leafHash(utf8(`leaf ${i}`)))
    const at = (size: number) => ({ origin: "o", size, root: log.root(size), extensions: [] })
    const record = { size: 3, root: log.root(3) }
    const request = (oldSize: number, proof: ReadonlyArray<Uint8Array>) => ({ oldSize, proof, note: "" })
    expect(checkAddCheckpoint(request(3, log.consistencyProof(3, 7)), at(7), record)).toEqual({ status: 200 })
    expect(checkAddCheckpoint(request(0, []), at(7), undefined)).toEqual({ status: 200 })
    expect(checkAddCheckpoint(request(0, []), at(7), record)).toEqual({ status: 409, size: 3 })
    expect(checkAddCheckpoint(request(8, []), at(7), record)).toMatchObject({ status: 400 })
    expect(checkAddCheckpoint(request(3, log.consistencyProof(2, 7)), at(7), record)).toMatchObject({ status: 422 })
    expect(checkAddCheckpoint(request(3, []), at(3), record)).toEqual({ status: 200 })
    expect(checkAddCheckpoint(request(3, []), { ...at(3), root: log.root(4) }, record)).toEqual({
      status: 409,
      size: 3
    })
  })
})
