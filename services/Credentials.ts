/**
 * Whether a credential authenticated earlier still holds, for the connections that outlive the
 * request that opened them (the live stream, docs/stream.md): an API key revoked, rotated or outgrown
 * by its creator's role; a JWT past its `exp`; an impersonation session ended or expired; an operator
 * session expired (adapters/auth/CredentialLiveness.ts decides, on the stored keys and sessions).
 *
 * The principal here is what is checked, not who acts: what it may then do is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { liveness as livenessOf } from "../adapters/auth/CredentialLiveness.js"
import type { Principal } from "../adapters/auth/Principal.js"
import { CredentialRepo } from "../adapters/store/identity/CredentialRepo.js"

export const make = Effect.gen(function* () {
  const repo = yield* CredentialRepo

  /** Whether `principal` still holds at `now` (ms), and until when if that is known. */
  const liveness = (principal: Principal, now: number) =>
    livenessOf(principal, now).pipe(Effect.provideService(CredentialRepo, repo))

  return { liveness }
})

export class Credentials extends Context.Tag("candor/services/Credentials")<
  Credentials,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Credentials, make)
