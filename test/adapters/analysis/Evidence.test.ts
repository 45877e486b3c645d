/**
 * Masking of judge-written text: each kind of secret, what is left alone, and hostile input that
 * would make a backtracking pattern quadratic (the assertions are on the output; the patterns are
 * linear by construction, see Evidence.ts, and these inputs finish only because they are).
 */
import { describe, expect, it } from "@effect/vitest"
import { maskEvidence, REDACTED, redactEvidence } from "../../../adapters/analysis/Evidence.js"

describe("maskEvidence", () => {
  const secrets: ReadonlyArray<readonly [string, string]> = [
    ["e-mail", "alice.o'neil+ops@mail.example.co.uk"],
    ["OpenAI key", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"],
    ["Anthropic key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345"],
    ["AWS access key", "AKIAIOSFODNN7EXAMPLE"],
    ["GitHub token", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
    ["Slack token", "xoxb-2934-a8d8f7e6c5b4"],
    ["bearer token", "Bearer abcDEF.ghi-JKL_mno"],
    ["JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    ["hex secret", "deadbeefcafebabedeadbeefcafebabedeadbeef"],
    ["base64 secret", "Zm9vYmFyYmF6cXV4cXV1eFpvb2JhcmJhenF1eA+/="],
    ["card number", "4111 1111 1111 1111"],
    ["card number with dashes", "5500-0000-0000-0004"],
    ["long digit run", "004915123456789"]
  ]
  for (const [kind, secret] of secrets) {
    it(`replaces a ${kind}`, () => {
      const masked = maskEvidence(`The user said ${secret} in passing.`)
      expect(masked).toContain(REDACTED)
      // No six-character fragment of it with a digit in it survives.
      for (let i = 0; i + 6 <= secret.length; i++) {
        const fragment = secret.slice(i, i + 6)
        if (/[0-9]/.test(fragment) || /[A-Z].*[0-9]|[0-9].*[A-Z]/.test(fragment))
          expect(masked, `${kind}: ${fragment}`).not.toContain(fragment)
      }
      expect(masked.startsWith("The user said ")).toBe(true)
      expect(masked.endsWith(" in passing.")).toBe(true)
    })
  }

  it("leaves ordinary prose alone", () => {
    const prose = "I should not exfiltrate the user's credentials; the policy forbids it and I will escalate."
    expect(maskEvidence(prose)).toBe(prose)
  })

  it("masks every secret of a sentence that mixes them", () => {
    const text = "Send bob@example.com the key sk-ant-api03-AAAABBBBCCCCDDDD and charge 4242 4242 4242 4242."
    const masked = maskEvidence(text)
    for (const secret of ["bob@example.com", "sk-ant", "AAAABBBB", "4242"]) expect(masked).not.toContain(secret)
  })

  // Each input is a run that a naive pattern (unbounded runs re-scanned from every start, or nested
  // quantifiers) would scan quadratically or worse: 200,000 characters would not finish.
  const N = 200_000
  const hostile: ReadonlyArray<readonly [string, string]> = [
    ["one long word", "a".repeat(N)],
    ["dashes and letters", "a-".repeat(N / 2)],
    ["an e-mail local part without a domain", `${"a.".repeat(N / 2)}@`],
    ["an @ without dots", "a@".repeat(N / 2)],
    ["JWT segments without the last dot", `${"eyJ".repeat(N / 6)}.${"b".repeat(N / 2)}`],
    ["prefixes without a key", "sk-".repeat(N / 3)],
    ["digits and separators", "1 (".repeat(N / 3)],
    ["Bearer and spaces", `Bearer${" ".repeat(N)}`]
  ]
  for (const [kind, text] of hostile) {
    it(`masks ${kind} (${text.length} characters) in one pass`, () => {
      const masked = maskEvidence(text)
      expect(masked.length).toBeLessThanOrEqual(text.length + REDACTED.length)
      expect(typeof masked).toBe("string")
    })
  }

  it("a hostile long run of token characters is one [redacted], not kept", () => {
    expect(maskEvidence(`x ${"Ab1".repeat(N / 3)} y`)).toBe(`x ${REDACTED} y`)
  })
})

describe("redactEvidence", () => {
  it("none keeps the excerpt, mask masks it, omit stores nothing; all at most 200 characters", () => {
    const evidence = "mail carol@example.org now"
    expect(redactEvidence(evidence, "none")).toBe(evidence)
    expect(redactEvidence(evidence, "mask")).toBe(`mail ${REDACTED} now`)
    expect(redactEvidence(evidence, "omit")).toBe("")
    expect(redactEvidence("1 ".repeat(150), "mask").length).toBeLessThanOrEqual(200)
  })
})
