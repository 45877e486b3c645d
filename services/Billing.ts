/**
 * The commercial catalog: the plans on offer, promo codes (validated case-insensitively, set by the
 * service-role key) and enterprise contact requests (stored with who asked, answered with their id).
 *
 * Who may act (any authenticated caller reads plans and validates a code; a contact request needs a
 * principal that may write; promo codes are the service-role key's) is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { CatalogRepo, type EnterpriseContact } from "../adapters/store/identity/CatalogRepo.js"

/** What a contact request says; its id and who sent it are the service's and the caller's. */
export type ContactRequest = Omit<EnterpriseContact, "id" | "user_id">

/** A promo code's terms, as the service-role key sets them. */
export interface PromoTerms {
  readonly name: string
  readonly discount_percent: number
  readonly discount_amount_cents: number
}

const NO_PROMO = { valid: false, discount_percent: 0, discount_amount_cents: 0, name: "" }

export const make = Effect.gen(function* () {
  const catalog = yield* CatalogRepo

  /** The seeded plans, in display order. */
  const plans = Effect.map(catalog.plans, (plans) => ({ plans }))

  /** Whether the code (surrounding blanks ignored) names an active, unexpired promo, and its terms. */
  const validatePromo = (code: string) =>
    Effect.map(catalog.promo(code.trim(), new Date()), (promo) =>
      promo === undefined
        ? NO_PROMO
        : {
            valid: true,
            discount_percent: promo.discount_percent,
            discount_amount_cents: promo.discount_amount_cents,
            name: promo.name
          }
    )

  /** Sets a promo code's terms; codes are stored upper-case (they are matched case-insensitively). */
  const putPromo = (code: string, terms: PromoTerms) =>
    Effect.as(catalog.putPromo({ code: code.toUpperCase(), ...terms }), { updated: true })

  /** Stores a contact request from `userId` (null: not a user, the service-role key); answers its id. */
  const contact = (userId: string | null, request: ContactRequest) =>
    Effect.gen(function* () {
      const id = `ent_${randomUUID()}`
      yield* catalog.addContact({ id, user_id: userId, ...request })
      return { id }
    })

  return { plans, validatePromo, putPromo, contact }
})

export class Billing extends Context.Tag("candor/services/Billing")<Billing, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Billing, make)
