/**
 * How many live API keys a user and an organization may hold (CANDOR_API_KEYS_PER_USER,
 * CANDOR_API_KEYS_PER_ORG): without a cap one credential could mint keys without end, each a row,
 * a rate-limit bucket and a credential to track down. Provided by ApiLive from the configuration.
 */
import * as Context from "effect/Context"
import type { KeyCaps } from "../../adapters/store/identity/CredentialRepo.js"

export class ApiKeyCaps extends Context.Tag("candor/src/api/ApiKeyCaps")<ApiKeyCaps, KeyCaps>() {}
