/**
 * The signing-key ring's cases, run in the repository conformance suite (RepositoryConformance.ts)
 * on PGlite and PostgreSQL: a new key retires the others; known keys are left alone.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as KeyRepo from "../../../adapters/store/KeyRepo.js"
import { generateSigningKey } from "../../../core/Signing.js"

export const newKeyRetiresOthers = Effect.gen(function* () {
  const repo = yield* KeyRepo.KeyRepo
  const [a, b, c] = [generateSigningKey(), generateSigningKey(), generateSigningKey()]
  expect(yield* repo.registerActive(a.publicKey)).toBe(true)
  expect(yield* repo.registerActive(a.publicKey)).toBe(false)
  yield* repo.registerRetired(c.publicKey)
  expect(yield* repo.registerActive(b.publicKey)).toBe(true)
  const keys = yield* repo.list
  const status = new Map(keys.map((key) => [key.key_id, key.retired_at === null ? "active" : "retired"]))
  expect([status.get(a.keyId), status.get(b.keyId), status.get(c.keyId)]).toEqual(["retired", "active", "retired"])
  expect(keys.find((key) => key.key_id === b.keyId)!.public_key).toEqual(b.publicKey)
})
