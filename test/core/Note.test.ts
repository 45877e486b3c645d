import { describe, expect, it } from "vitest"
import { concatBytes, fromBase64, toBase64, toHex, utf8 } from "../../core/Bytes.js"
import { sha256 } from "../../core/Hash.js"
import {
  addNoteSignature,
  type Checkpoint,
  formatCheckpoint,
  formatVerifierKey,
  noteKeyHash,
  type NoteSigner,
  type NoteVerifier,
  parseCheckpoint,
  parseVerifierKey,
  signNote,
  verifyCheckpointNote,
  verifyNote
} from "../../core/Note.js"
import { generateSigningKey, type SigningKey, signingKeyFromSeed } from "../../core/Signing.js"

const b64 = (text: string): Uint8Array => {
  const bytes = fromBase64(text)
  if (bytes === undefined) throw new Error(`bad base64 in test: ${text}`)
  return bytes
}
const verifierOf = (name: string, key: SigningKey): NoteVerifier => ({ name, publicKey: key.publicKey })
const mustParseVerifier = (vkey: string): NoteVerifier => {
  const verifier = parseVerifierKey(vkey)
  if (verifier === undefined) throw new Error(`test verifier key did not parse: ${vkey}`)
  return verifier
}

/**
 * Published vectors from golang.org/x/mod/sumdb/note (note.go doc comment and note_test.go):
 * an independent implementation's output that ours must reproduce byte for byte.
 */
const go = {
  peterSkey: "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
  peterVkey: "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
  enochVkey: "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop",
  text: "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n",
  peterSig:
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n",
  enochSig: "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n"
}

/** The Go signer key is "PRIVATE+KEY+<name>+<hash>+base64(0x01 ‖ seed)". */
const peterKey = (): SigningKey => {
  const data = b64(go.peterSkey.split("+").slice(4).join("+"))
  expect(data[0]).toBe(1)
  return signingKeyFromSeed(data.subarray(1))!
}

/** Real signed tree heads of sum.golang.org (Go checksum database), as served, with its published key. */
const sumdb = {
  vkey: "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8",
  origin: "go.sum database tree",
  notes: [
    [
      "65209736",
      "5+uGFjx6xBZG8ip1+wi77v+grwbhhukIrxEUS8PXvRo=",
      "Az3grnbssgK7ubgFX36gVETtNv0U23qxyAhAMai2QUfeGa3nB/akvkMdlUErfcZz7l/R3cVtYspg3dxXABkGZZKdsQ8="
    ],
    [
      "52544510",
      "+TGlZfnTizQCJgyZR56QixD8+X4dd8Wefy8U1w6k0Ig=",
      "Az3grn6d1PSjcypDf9bfcFVU5fvJB7VkLc0MAbz8jqeQVnSbAj9pKcsB5dJt5VdswPDUtiFar5LPRBu+uEQAT1CDfAc="
    ],
    [
      "31700353",
      "qINS1GRFhWHwdkUeqLEoP4yEMkTBBzxBkGwGQlVlVcs=",
      "Az3grnmrIUEDFqHzAElIQCPNoRFRAAdFo47fooyWKMHb89k11GJh5zHIfNCOBmwn/C3YI8oW9/C8DJ87F61QqspBYwM="
    ],
    [
      "3784599",
      "7uvxIZ67TZygcq/AehTD8iHYt81Ih+Zl2Y7vXZbfszQ=",
      "Az3grn972wXskjQrsZhVGc93fTU2uOsmSTiId1Wn1lxDCup5z4ggl1/4gaUqOkMa6cMbYvjB7hn7yemNr7Zqanol/go="
    ]
  ].map(([size, root, sig]) => ({
    size: Number(size),
    root: root!,
    note: `go.sum database tree\n${size}\n${root}\n\n— sum.golang.org ${sig}\n`
  }))
}

/** Examples from the C2SP specifications (signed-note, tlog-cosignature); their keys are not published. */
const c2sp = {
  quasimodo:
    "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n\n" +
    "— quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n",
  sofa:
    "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n" +
    "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
    "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
}

describe("Go sumdb/note vectors", () => {
  const peter = mustParseVerifier(go.peterVkey)
  const enoch = mustParseVerifier(go.enochVkey)

  it("derives the published verifier key and key hash from the published signer key", () => {
    const key = peterKey()
    expect(toHex(key.publicKey)).toBe(toHex(peter.publicKey))
    expect(peter.name).toBe("PeterNeumann")
    expect(toHex(noteKeyHash("PeterNeumann", key.publicKey))).toBe("c74f20a3")
    expect(formatVerifierKey(verifierOf("PeterNeumann", key))).toBe(go.peterVkey)
    expect(formatVerifierKey(enoch)).toBe(go.enochVkey)
  })

  it("signs the note exactly as Go's note.Sign does", () => {
    expect(signNote(go.text, { name: "PeterNeumann", key: peterKey() })).toBe(`${go.text}\n${go.peterSig}`)
  })

  it("opens the published notes like Go's note.Open", () => {
    const both = `${go.text}\n${go.peterSig}${go.enochSig}`
    expect(verifyNote(both, [peter])).toEqual({ ok: true, body: go.text, verifiedBy: ["PeterNeumann"] })
    expect(verifyNote(both, [enoch])).toEqual({ ok: true, body: go.text, verifiedBy: ["EnochRoot"] })
    expect(verifyNote(both, [peter, enoch])).toEqual({
      ok: true,
      body: go.text,
      verifiedBy: ["PeterNeumann", "EnochRoot"]
    })
    expect(verifyNote(both, [enoch, peter, enoch])).toEqual({
      ok: true,
      body: go.text,
      verifiedBy: ["PeterNeumann", "EnochRoot"]
    })
    expect(verifyNote(both, [])).toEqual({ ok: false, error: "no signature by a known key" })
  })

  it("rejects what Go's note.Open rejects", () => {
    const bad = [
      go.text,
      `${go.text}\n`,
      `${go.text}\n${go.peterSig.slice(0, -1)}`,
      `\u0001${go.text}\n${go.peterSig}`,
      `\ud800${go.text}\n${go.peterSig}`, // the JS-string counterpart of Go's "\xff" (invalid UTF-8)
      `${go.text}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${go.text}\n${go.peterSig}Unexpected line.\n`,
      `${go.text}\n${go.peterSig.slice(0, 60)}ABCD${go.peterSig.slice(60)}`, // invalid signature by a known key
      `${go.text}\n${go.peterSig.repeat(101)}`
    ]
    for (const note of bad) expect(verifyNote(note, [peter]).ok, JSON.stringify(note)).toBe(false)
  })

  it("rejects every substring and every single-character increment of a verifier key (Go's TestNewVerifier)", () => {
    const vkey = go.peterVkey
    let tried = 0
    for (let i = 0; i <= vkey.length; i++) {
      for (let j = i + 1; j <= vkey.length; j++) {
        if (i === 0 && j === vkey.length) continue
        expect(parseVerifierKey(vkey.slice(i, j)), vkey.slice(i, j)).toBeUndefined()
        tried++
      }
    }
    for (let i = 0; i < vkey.length; i++) {
      const mangled = vkey.slice(0, i) + String.fromCharCode(vkey.charCodeAt(i) + 1) + vkey.slice(i + 1)
      expect(parseVerifierKey(mangled), mangled).toBeUndefined()
      tried++
    }
    expect(tried).toBe((vkey.length * (vkey.length + 1)) / 2 - 1 + vkey.length)
    // Wrong key length with an adjusted hash, and an unknown algorithm with an adjusted hash.
    expect(
      parseVerifierKey("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==")
    ).toBeUndefined()
    expect(parseVerifierKey("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")).toBeUndefined()
    // Whitespace around a key (a line read from a file) is fine; uppercase hash too, as in Go.
    expect(parseVerifierKey(`  ${vkey}\n`)).toEqual(peter)
    expect(parseVerifierKey(vkey.replace("c74f20a3", "C74F20A3"))).toEqual(peter)
  })
})

describe("sum.golang.org checkpoints", () => {
  const verifier = mustParseVerifier(sumdb.vkey)

  it("parses the published key (its base64 contains '+')", () => {
    expect(verifier.name).toBe("sum.golang.org")
    expect(toHex(noteKeyHash(verifier.name, verifier.publicKey))).toBe("033de0ae")
    expect(formatVerifierKey(verifier)).toBe(sumdb.vkey)
  })

  for (const { size, root, note } of sumdb.notes) {
    it(`verifies the real signed tree head of size ${size}`, () => {
      const checkpoint = verifyCheckpointNote(note, [verifier], sumdb.origin)
      expect(checkpoint).toBeDefined()
      expect(checkpoint!.origin).toBe(sumdb.origin)
      expect(checkpoint!.size).toBe(size)
      expect(toBase64(checkpoint!.root)).toBe(root)
      expect(checkpoint!.extensions).toEqual([])
      expect(
        verifyCheckpointNote(note.replace(String(size), String(size + 1)), [verifier], sumdb.origin)
      ).toBeUndefined()
      expect(verifyCheckpointNote(note, [verifier], "sum.golang.org")).toBeUndefined()
    })
  }
})

describe("C2SP examples", () => {
  it("parses the signed-note example (blank line inside the text): unsigned by any known key, not malformed", () => {
    const key = generateSigningKey()
    expect(verifyNote(c2sp.quasimodo, [verifierOf("quasimodo.example/salvatore", key)])).toEqual({
      ok: false,
      error: "no signature by a known key"
    })
    // The same text signed by us round-trips with its inner blank line.
    const body = c2sp.quasimodo.slice(0, c2sp.quasimodo.lastIndexOf("\n\n") + 1)
    expect(body.split("\n")).toHaveLength(5)
    const signed = signNote(body, { name: "quasimodo.example/salvatore", key })
    expect(verifyNote(signed, [verifierOf("quasimodo.example/salvatore", key)])).toEqual({
      ok: true,
      body,
      verifiedBy: ["quasimodo.example/salvatore"]
    })
  })

  it("parses the cosigned checkpoint example (a 76-byte timestamped cosignature is an unknown signature)", () => {
    expect(verifyNote(c2sp.sofa, [verifierOf("example.com/behind-the-sofa", generateSigningKey())])).toEqual({
      ok: false,
      error: "no signature by a known key"
    })
    const checkpoint = parseCheckpoint(c2sp.sofa.slice(0, c2sp.sofa.indexOf("\n\n") + 1))
    expect(checkpoint?.origin).toBe("example.com/behind-the-sofa")
    expect(checkpoint?.size).toBe(20852163)
    expect(toBase64(checkpoint!.root)).toBe("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
    // Adding our own log signature to it makes it verify with our key, the witness line still ignored.
    const key = generateSigningKey()
    const cosigned = addNoteSignature(c2sp.sofa, { name: "candor.example/log", key })!
    expect(
      verifyCheckpointNote(cosigned, [verifierOf("candor.example/log", key)], "example.com/behind-the-sofa")?.size
    ).toBe(20852163)
  })
})

describe("checkpoint bodies", () => {
  const root = sha256(concatBytes(Uint8Array.of(0), utf8("hello world")))

  it("formats Go's tlog.FormatTree golden body", () => {
    const body = "go.sum database tree\n123456789012\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n"
    expect(formatCheckpoint({ origin: "go.sum database tree", size: 123456789012, root, extensions: [] })).toBe(body)
    const parsed = parseCheckpoint(body)!
    expect(parsed.size).toBe(123456789012)
    expect(toHex(parsed.root)).toBe(toHex(root))
  })

  it("round-trips with extension lines and size 0", () => {
    for (const checkpoint of [
      { origin: "Moon Log", size: 4027504, root, extensions: ["6086d1a9", "Waxing gibbous"] },
      { origin: "candor.example/agents/a1", size: 0, root, extensions: [] },
      { origin: "x", size: Number.MAX_SAFE_INTEGER, root, extensions: ["— looks like a signature but is an extension"] }
    ] satisfies Array<Checkpoint>) {
      const parsed = parseCheckpoint(formatCheckpoint(checkpoint))!
      expect({ ...parsed, root: toHex(parsed.root) }).toEqual({ ...checkpoint, root: toHex(root) })
    }
  })

  it("rejects malformed bodies", () => {
    const r = toBase64(root)
    const bad = [
      "",
      "Head\n9944\n",
      `\n9944\n${r}\n`,
      `Log\n123\n${r}`,
      `Log\nbananas\n${r}\n`,
      `Log\n-34\n${r}\n`,
      `Log\n+34\n${r}\n`,
      `Log\n 34\n${r}\n`,
      `Log\n0x22\n${r}\n`,
      `Log\n034\n${r}\n`,
      `Log\n00\n${r}\n`,
      `Log\n3438945738945739845734895735\n${r}\n`,
      `Log\n9007199254740992\n${r}\n`, // 2^53: beyond a safe integer
      "Log\n123\nThisIsn'tBase64\n",
      "Log\n123\nYmFuYW5hcw==\n", // 7-byte root ("bananas"), fine for transparency-dev, not an RFC 6962 SHA-256 root
      `Log\n123\n${r.slice(0, -1)}\n`,
      `Log\n123\n${r.slice(0, -2)}1=\n`, // "0=" → "1=": same bytes, non-zero padding bits (non-canonical)
      `Log\n123\n${r}\n\n`, // empty extension line
      `Log\n123\n${r}\next\n\nmore\n`,
      `Lo\tg\n123\n${r}\n`,
      `Log\r\n123\n${r}\n`
    ]
    // The "1=" spelling really is the same 32 bytes under a lenient decoder.
    expect(toHex(b64(`${r.slice(0, -2)}1=`))).toBe(toHex(root))
    for (const body of bad) expect(parseCheckpoint(body), JSON.stringify(body)).toBeUndefined()
    expect(parseCheckpoint(42 as unknown as string)).toBeUndefined()
  })

  it("refuses to format an invalid checkpoint (programmer error)", () => {
    const ok: Checkpoint = { origin: "o", size: 1, root, extensions: [] }
    expect(() => formatCheckpoint({ ...ok, origin: "" })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, origin: "a\nb" })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, size: -1 })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, size: 1.5 })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, size: 2 ** 53 })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, root: root.subarray(0, 31) })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, extensions: [""] })).toThrow(RangeError)
    expect(() => formatCheckpoint({ ...ok, extensions: ["a\nb"] })).toThrow(RangeError)
  })
})

describe("signed checkpoints", () => {
  const origin = "candor.example/agents/agent-7"
  const log: NoteSigner = { name: origin, key: signingKeyFromSeed(sha256(utf8("log key")))! }
  const witness: NoteSigner = { name: "witness.example/w1", key: signingKeyFromSeed(sha256(utf8("witness key")))! }
  const logVerifier = verifierOf(log.name, log.key)
  const witnessVerifier = verifierOf(witness.name, witness.key)
  const checkpoint: Checkpoint = { origin, size: 1234, root: sha256(utf8("root")), extensions: [] }
  const note = signNote(formatCheckpoint(checkpoint), log)

  it("round-trips", () => {
    const verified = verifyCheckpointNote(note, [logVerifier], origin)!
    expect(verified.origin).toBe(origin)
    expect(verified.size).toBe(1234)
    expect(toHex(verified.root)).toBe(toHex(checkpoint.root))
    expect(verifyCheckpointNote(note, [logVerifier])?.size).toBe(1234)
    expect(note.split("\n")).toHaveLength(6)
    expect(note.split("\n")[4]).toMatch(/^— candor\.example\/agents\/agent-7 [A-Za-z0-9+/]{91}=$/)
  })

  it("rejects the wrong origin, the wrong key and a non-checkpoint body", () => {
    expect(verifyCheckpointNote(note, [logVerifier], `${origin}x`)).toBeUndefined()
    expect(verifyCheckpointNote(note, [logVerifier], "")).toBeUndefined()
    expect(verifyCheckpointNote(note, [witnessVerifier], origin)).toBeUndefined()
    expect(verifyCheckpointNote(note, [verifierOf(log.name, witness.key)], origin)).toBeUndefined()
    expect(verifyCheckpointNote(signNote("just text\n", log), [logVerifier])).toBeUndefined()
  })

  it("rejects every single-bit flip of the signed note's UTF-8 bytes", () => {
    const bytes = utf8(note)
    const decoder = new TextDecoder("utf-8", { fatal: false })
    let flips = 0
    for (let i = 0; i < bytes.length * 8; i++) {
      const copy = Uint8Array.from(bytes)
      copy[i >> 3] = copy[i >> 3]! ^ (1 << (i & 7))
      const tampered = decoder.decode(copy)
      expect(verifyNote(tampered, [logVerifier]).ok, `bit ${i}`).toBe(false)
      expect(verifyCheckpointNote(tampered, [logVerifier], origin)).toBeUndefined()
      flips++
    }
    expect(flips).toBe(bytes.length * 8)
  })

  it("rejects every single-character replacement, deletion and insertion", () => {
    let tampers = 0
    for (let i = 0; i <= note.length; i++) {
      const variants = [note.slice(0, i) + "x" + note.slice(i), note.slice(0, i) + "\n" + note.slice(i)]
      if (i < note.length) {
        variants.push(note.slice(0, i) + note.slice(i + 1))
        for (const c of ["A", "/", "=", " ", "+", "0"])
          if (note[i] !== c) variants.push(note.slice(0, i) + c + note.slice(i + 1))
      }
      for (const variant of variants) {
        expect(verifyNote(variant, [logVerifier]).ok, JSON.stringify(variant)).toBe(false)
        tampers++
      }
    }
    expect(tampers).toBeGreaterThan(note.length * 8)
  })

  it("rejects every line deletion, duplication and swap", () => {
    const lines = note.slice(0, -1).split("\n")
    const variants: Array<string> = []
    for (let i = 0; i < lines.length; i++) {
      variants.push([...lines.slice(0, i), ...lines.slice(i + 1)].join("\n") + "\n")
      variants.push([...lines.slice(0, i + 1), ...lines.slice(i)].join("\n") + "\n")
      for (let j = i + 1; j < lines.length; j++) {
        const swapped = [...lines]
        swapped[i] = lines[j]!
        swapped[j] = lines[i]!
        if (swapped.join("\n") !== lines.join("\n")) variants.push(swapped.join("\n") + "\n")
      }
    }
    for (const variant of variants) expect(verifyNote(variant, [logVerifier]).ok, JSON.stringify(variant)).toBe(false)
    expect(variants.length).toBeGreaterThan(15)
  })

  it("rejects the note truncated at every offset", () => {
    for (let i = 0; i < note.length; i++) {
      expect(verifyNote(note.slice(0, i), [logVerifier]).ok, `offset ${i}`).toBe(false)
      expect(verifyCheckpointNote(note.slice(0, i), [logVerifier], origin)).toBeUndefined()
    }
    expect(verifyNote(note, [logVerifier]).ok).toBe(true)
  })

  it("ignores signatures by unknown keys, including a same-name key with a different hash", () => {
    const stranger: NoteSigner = { name: "stranger.example", key: generateSigningKey() }
    const rotated: NoteSigner = { name: origin, key: generateSigningKey() } // same name, other key: other hash
    let cosigned = addNoteSignature(note, stranger)!
    cosigned = addNoteSignature(cosigned, rotated)!
    expect(verifyNote(cosigned, [logVerifier])).toEqual({
      ok: true,
      body: formatCheckpoint(checkpoint),
      verifiedBy: [origin]
    })
    // An unknown key's "signature" need not even be Ed25519-sized.
    const odd = `${cosigned}— other.example ${toBase64(new Uint8Array(9))}\n`
    expect(verifyNote(odd, [logVerifier]).ok).toBe(true)
  })

  it("a cosigned note verifies with either key, and with both", () => {
    const cosigned = addNoteSignature(note, witness)!
    expect(cosigned.startsWith(note)).toBe(true)
    expect(verifyNote(cosigned, [logVerifier])).toMatchObject({ ok: true, verifiedBy: [origin] })
    expect(verifyNote(cosigned, [witnessVerifier])).toMatchObject({ ok: true, verifiedBy: [witness.name] })
    expect(verifyNote(cosigned, [witnessVerifier, logVerifier])).toMatchObject({
      ok: true,
      verifiedBy: [origin, witness.name]
    })
    expect(verifyCheckpointNote(cosigned, [witnessVerifier], origin)?.size).toBe(1234)
    expect(verifyNote(cosigned, [verifierOf("nobody", generateSigningKey())]).ok).toBe(false)
    // Cosigning again with the same key replaces its line (deterministic Ed25519: same text).
    expect(addNoteSignature(cosigned, witness)).toBe(cosigned)
    expect(addNoteSignature(cosigned, log)).toBe(
      `${formatCheckpoint(checkpoint)}\n${cosigned.split("\n")[5]}\n${note.split("\n")[4]}\n`
    )
  })

  it("a known key with a bad signature rejects the note even when another known key verifies", () => {
    const cosigned = addNoteSignature(note, witness)!
    const lines = cosigned.split("\n")
    const witnessLine = lines[5]!
    // Keep the key hash (first 8 base64 characters after the name cover 6 bytes), corrupt the signature.
    const prefix = `— ${witness.name} `
    const data = b64(witnessLine.slice(prefix.length))
    data[40] = data[40]! ^ 1
    lines[5] = prefix + toBase64(data)
    const corrupted = lines.join("\n")
    expect(verifyNote(corrupted, [logVerifier]).ok).toBe(true) // the witness is unknown here: ignored
    expect(verifyNote(corrupted, [logVerifier, witnessVerifier])).toEqual({
      ok: false,
      error: `invalid signature by ${witness.name}+${toHex(noteKeyHash(witness.name, witness.key.publicKey))}`
    })
    // A known key whose signature is not 64 bytes.
    const short = prefix + toBase64(data.subarray(0, 40))
    lines[5] = short
    expect(verifyNote(lines.join("\n"), [logVerifier, witnessVerifier]).ok).toBe(false)
  })

  it("rejects duplicated signatures and more than 100", () => {
    const sigLine = `${note.split("\n")[4]}\n`
    expect(verifyNote(note + sigLine, [logVerifier])).toEqual({
      ok: false,
      error: `malformed note: duplicate signature by ${origin}+${toHex(noteKeyHash(origin, log.key.publicKey))}`
    })
    const cosigned = addNoteSignature(note, witness)!
    expect(verifyNote(cosigned + `${cosigned.split("\n")[5]}\n`, [logVerifier]).ok).toBe(false)
    // 99 unknown signers + the log: 100 lines, accepted; one more and the note is refused.
    let many = note
    for (let i = 0; i < 99; i++)
      many += `— signer${i}.example ${toBase64(concatBytes(Uint8Array.of(0, 0, 0, i), new Uint8Array(64)))}\n`
    expect(many.split("\n").length - 6).toBe(99)
    expect(verifyNote(many, [logVerifier]).ok).toBe(true)
    const tooMany = `${many}— signer99.example ${toBase64(new Uint8Array(68))}\n`
    expect(verifyNote(tooMany, [logVerifier])).toEqual({ ok: false, error: "malformed note: more than 100 signatures" })
    expect(addNoteSignature(many, witness)).toBeUndefined()
  })

  it("rejects non-canonical base64 in a signature line", () => {
    const line = note.split("\n")[4]!
    const last = line.at(-2)! // the character before "=" carries 2 padding bits
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    const sameBytes = alphabet[alphabet.indexOf(last) + 1]!
    const tampered = note.replace(line, `${line.slice(0, -2)}${sameBytes}=`)
    const decoded = b64(tampered.split("\n")[4]!.split(" ")[2]!)
    expect(toHex(decoded)).toBe(toHex(b64(line.split(" ")[2]!))) // Node's decoder ignores the padding bits
    expect(verifyNote(tampered, [logVerifier]).ok).toBe(false)
  })
})

describe("names and note texts", () => {
  const key = generateSigningKey()
  const badNames = [
    "",
    "a b",
    "a+b",
    "a\tb",
    "a\u00a0b",
    "a\u2003b",
    "a\u3000b",
    "a\u0085b",
    "a\nb",
    "a\u0001b",
    "a\ud800b",
    "+",
    " "
  ]

  it("the signer refuses names with spaces, plus signs or control characters", () => {
    for (const name of badNames) {
      expect(() => signNote("body\n", { name, key }), JSON.stringify(name)).toThrow()
      expect(addNoteSignature(signNote("body\n", { name: "ok", key }), { name, key })).toBeUndefined()
      expect(() => formatVerifierKey({ name, publicKey: key.publicKey })).toThrow(RangeError)
    }
    expect(() => formatVerifierKey({ name: "ok", publicKey: key.publicKey.subarray(1) })).toThrow(RangeError)
    // Non-ASCII names without spaces are fine.
    const name = "séance.example/ログ"
    expect(verifyNote(signNote("body\n", { name, key }), [{ name, publicKey: key.publicKey }]).ok).toBe(true)
    expect(parseVerifierKey(formatVerifierKey({ name, publicKey: key.publicKey }))?.name).toBe(name)
  })

  it("signNote throws on an invalid note text (programmer error)", () => {
    for (const body of ["", "no newline", "tab\there\n", "cr\r\n", "\u0000\n", "lone \udc00 surrogate\n"]) {
      expect(() => signNote(body, { name: "ok", key }), JSON.stringify(body)).toThrow()
    }
    expect(signNote("\n", { name: "ok", key }).startsWith("\n\n— ok ")).toBe(true)
  })

  it("a body ending in a blank line or containing signature-like lines still verifies", () => {
    const verifier = { name: "ok", publicKey: key.publicKey }
    for (const body of ["\n", "a\n\n", "a\n\n\n", "x\n\n— ok AAAA\n", "DEL \u007f is not a C0 control\n"]) {
      expect(verifyNote(signNote(body, { name: "ok", key }), [verifier]), JSON.stringify(body)).toEqual({
        ok: true,
        body,
        verifiedBy: ["ok"]
      })
    }
  })

  it("verifyNote never throws", () => {
    const junk: Array<unknown> = [
      undefined,
      null,
      42,
      {},
      [],
      "",
      "\n\n",
      "\n\n\n",
      "a\n\n— \n",
      "a\n\n—  x\n",
      "a\n\n— n \n",
      "a\n\n— n AAAA\n"
    ]
    const verifiers = [{ name: "n", publicKey: key.publicKey }]
    for (const note of junk) expect(verifyNote(note as string, verifiers).ok).toBe(false)
    const broken = [{ name: undefined, publicKey: undefined }] as unknown as Array<NoteVerifier>
    expect(verifyNote(signNote("x\n", { name: "n", key }), broken).ok).toBe(false)
    expect(verifyCheckpointNote(undefined as unknown as string, verifiers)).toBeUndefined()
  })

  it("parseVerifierKey refuses keys verifySignature could never accept (small-order point)", () => {
    const identity = Uint8Array.of(1, ...new Uint8Array(31))
    const vkey = `bad+${toHex(noteKeyHash("bad", identity))}+${toBase64(concatBytes(Uint8Array.of(1), identity))}`
    expect(parseVerifierKey(vkey)).toBeUndefined()
    expect(parseVerifierKey(42 as unknown as string)).toBeUndefined()
  })
})
