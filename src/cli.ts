/**
 * The `candor` command line. Commands appear here only once they do something: `token`,
 * `verify` and `keys` arrive with the adapters they wire.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pkg from "../package.json" with { type: "json" }
import { configDocs, layerFromEnv } from "./config.js"
import { roleChoices, selectRoles, ServeLive } from "./serve.js"

const role = Options.choice("role", roleChoices).pipe(
  Options.withDefault("all" as const),
  Options.withDescription("Which part of Candor this process runs; `all` runs every role in one process")
)

const serve = Command.make("serve", { role }, ({ role }) =>
  Layer.launch(ServeLive(selectRoles(role))).pipe(Effect.provide(layerFromEnv))
).pipe(Command.withDescription("Start the server (configured by the environment variables below)"))

export const candor = Command.make("candor").pipe(
  Command.withDescription("Agent integrity gateway"),
  Command.withSubcommands([serve])
)

const [first, ...rest] = configDocs.map((doc): [Span.Span, HelpDoc.HelpDoc] => [
  Span.text(doc.key),
  HelpDoc.p(`${doc.description}. Default: ${doc.default}.`)
])

// Generated from the configuration module, so `--help` lists exactly the keys the code reads.
const environment = first === undefined
  ? HelpDoc.empty
  : HelpDoc.blocks([HelpDoc.h1("ENVIRONMENT"), HelpDoc.descriptionList([first, ...rest])])

export const run = Command.run(candor, { name: "candor", version: pkg.version, footer: environment })
