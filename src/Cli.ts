/**
 * The `candor` command line: `serve`; `token`, which mints a token of the embedded identity
 * provider; `license issue`, which signs a self-hosting license with the deployment's signing key.
 * `verify` (the offline verifier), `reputation verify` (a published score recomputed from its
 * certificates) and `keys` (the signing-key ring) are in ./cli/.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as IdentityTokens from "../adapters/auth/IdentityTokens.js"
import * as SigningKeys from "../adapters/keys/SigningKeys.js"
import { issueLicense } from "../adapters/licensing/LicenseToken.js"
import pkg from "../package.json" with { type: "json" }
import { CandorConfig, configDocs, layerFromEnv } from "./Config.js"
import { roleChoices, selectRoles, ServeProcessLive } from "./Serve.js"
import { chainCommand } from "./cli/Chain.js"
import { keysCommand } from "./cli/Keys.js"
import { reputationCommand } from "./cli/ReputationVerify.js"
import { verifyCommand } from "./cli/Verify.js"

const role = Options.choice("role", roleChoices).pipe(
  Options.withDefault("all" as const),
  Options.withDescription("Which part of Candor this process runs; `all` runs every role in one process")
)

const serve = Command.make("serve", { role }, ({ role }) =>
  Layer.launch(ServeProcessLive(selectRoles(role))).pipe(Effect.provide(layerFromEnv))
).pipe(Command.withDescription("Start the server (configured by the environment variables below)"))

class CliError extends Error {
  override readonly name = "CliError"
}

const token = Command.make(
  "token",
  {
    sub: Options.text("sub").pipe(Options.withDescription("The user id (the token's sub claim)")),
    email: Options.text("email").pipe(Options.optional, Options.withDescription("The user's email")),
    ttl: Options.integer("ttl").pipe(Options.withDefault(86_400), Options.withDescription("Lifetime in seconds"))
  },
  ({ email, sub, ttl }) =>
    Effect.gen(function* () {
      const config = yield* CandorConfig
      if (Option.isSome(config.authJwksUrl)) {
        return yield* Effect.fail(new CliError("AUTH_JWKS_URL is set: tokens come from that identity provider"))
      }
      const secret = Option.isSome(config.authJwtSecret)
        ? Redacted.value(config.authJwtSecret.value)
        : yield* IdentityTokens.devSecret(config.dataDir)
      const jwt = yield* Effect.promise(() =>
        IdentityTokens.mintToken(secret, {
          sub,
          email: Option.getOrUndefined(email),
          ttlSeconds: ttl,
          issuer: Option.getOrUndefined(config.authJwtIssuer),
          audience: Option.getOrUndefined(config.authJwtAudience)
        })
      )
      yield* Console.log(jwt)
    }).pipe(Effect.provide(layerFromEnv))
).pipe(
  Command.withDescription(
    "Mint a token of the embedded identity provider (AUTH_JWT_SECRET or the data dir's dev secret)"
  )
)

const jsonObject = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withDefault("{}"),
    Options.mapEffect((text): Effect.Effect<Record<string, unknown>, ValidationError.ValidationError> => {
      try {
        const value: unknown = JSON.parse(text)
        if (value !== null && typeof value === "object" && !Array.isArray(value)) {
          return Effect.succeed(value as Record<string, unknown>)
        }
      } catch {
        // reported below
      }
      return Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} must be a JSON object`)))
    }),
    Options.withDescription(description)
  )

const licenseIssue = Command.make(
  "issue",
  {
    plan: Options.text("plan").pipe(Options.withDefault("enterprise"), Options.withDescription("Plan id")),
    licensee: Options.text("licensee").pipe(Options.withDescription("Who the license is for")),
    days: Options.integer("days").pipe(Options.withDefault(365), Options.withDescription("Validity in days")),
    features: jsonObject("features", "Feature flags overriding the plan's, as JSON"),
    limits: jsonObject("limits", "Limits overriding the plan's, as JSON")
  },
  ({ days, features, licensee, limits, plan }) =>
    Effect.gen(function* () {
      const config = yield* CandorConfig
      const { active } = yield* SigningKeys.SigningKeys.pipe(
        Effect.provide(SigningKeys.layer({ signingKey: config.signingKey, dataDir: config.dataDir }))
      )
      const now = new Date()
      yield* Console.log(
        issueLicense(active, {
          license_id: `lic_${randomUUID()}`,
          plan_id: plan,
          licensee,
          feature_flags: features,
          limits,
          issued_at: now.toISOString(),
          expires_at: new Date(now.getTime() + days * 86_400_000).toISOString()
        })
      )
    }).pipe(Effect.provide(layerFromEnv))
).pipe(Command.withDescription("Sign a license token with SIGNING_KEY (or the data dir's key)"))

const license = Command.make("license").pipe(
  Command.withDescription("Self-hosting licenses"),
  Command.withSubcommands([licenseIssue])
)

export const candor = Command.make("candor").pipe(
  Command.withDescription("Agent integrity gateway"),
  Command.withSubcommands([serve, token, license, verifyCommand, reputationCommand, keysCommand, chainCommand])
)

const [first, ...rest] = configDocs.map((doc): [Span.Span, HelpDoc.HelpDoc] => [
  Span.text(doc.key),
  HelpDoc.p(`${doc.description}. Default: ${doc.default}.`)
])

// Generated from the configuration module, so `--help` lists exactly the keys the code reads.
const environment =
  first === undefined
    ? HelpDoc.empty
    : HelpDoc.blocks([HelpDoc.h1("ENVIRONMENT"), HelpDoc.descriptionList([first, ...rest])])

export const run = Command.run(candor, { name: "candor", version: pkg.version, footer: environment })
