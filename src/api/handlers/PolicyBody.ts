/**
 * A policy PUT's body, read raw (the HttpApi payload decoder only knows JSON): JSON, or YAML under
 * `application/yaml` / `text/yaml` (and their `x-` spellings), into a decoded, normalised policy.
 *
 * Every failure is a 400 whose message says where: a YAML syntax error by line and column
 * (`line 3, column 7: …`), a schema error by the field's path (`forbidden[0].pattern: …`). The
 * body size limit still applies (ErrorBodies.ts bounds every body read in a request); a body over
 * it dies with the reader's error, which ErrorBodies answers 413.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import { LineCounter, parseDocument } from "yaml"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { tryCanonicalJson } from "../../../core/Canonical.js"
import { decodePolicy, type Policy, type PolicyScope } from "../../../core/schema/Policy.js"

const YAML_TYPES = new Set(["application/yaml", "text/yaml", "application/x-yaml", "text/x-yaml"])

/** Aliases expand: a few hundred are plenty for a policy, and the bound stops a "billion laughs" document. */
const MAX_YAML_ALIASES = 100

const isJsonType = (type: string): boolean => type === "application/json" || type.endsWith("+json")

const badRequest = (error: string) => new BadRequest({ error })

/** `forbidden[0].pattern`, `capability_mappings.browsing.tools[1]`, `capability_mappings["a b"]`. */
export const issuePath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === "number") return `${out}[${key}]`
    const name = String(key)
    if (/^[A-Za-z_][\w-]*$/.test(name)) return out === "" ? name : `${out}.${name}`
    return `${out}[${JSON.stringify(name)}]`
  }, "")

/** Up to five issues, each as `path: message`. */
const describe = (error: ParseResult.ParseError, field = ""): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 5)
    .map(({ path, message }) => {
      const inner = issuePath(path)
      const where =
        field === "" ? inner : inner === "" ? field : inner.startsWith("[") ? `${field}${inner}` : `${field}.${inner}`
      return where === "" ? message : `${where}: ${message}`
    })
    .join("; ")

const parseYaml = (text: string): Either.Either<unknown, string> => {
  const lineCounter = new LineCounter()
  const document = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    // YAML 1.2 core: no YAML 1.1 extras (!!binary, !!set, !!timestamp) that have no JSON meaning.
    schema: "core",
    resolveKnownTags: false,
    uniqueKeys: true
  })
  const [first] = document.errors
  if (first !== undefined) {
    const { line, col } = lineCounter.linePos(first.pos[0])
    return Either.left(`line ${line}, column ${col}: ${first.message}`)
  }
  try {
    return Either.right(document.toJS({ maxAliasCount: MAX_YAML_ALIASES }))
  } catch (error) {
    // Unresolved or excessive aliases: the library's message names the alias.
    return Either.left(`YAML: ${error instanceof Error ? error.message : "cannot be read"}`)
  }
}

const parseJson = (text: string): Either.Either<unknown, string> => {
  try {
    return Either.right(JSON.parse(text))
  } catch {
    return Either.left("request body is not valid JSON")
  }
}

/**
 * The body as a policy of `scope`: `meta.scope`, when the document gives one, must be it, and is
 * filled in when it does not.
 */
export const readPolicyBody = (
  request: HttpServerRequest.HttpServerRequest,
  scope: PolicyScope
): Effect.Effect<Policy, BadRequest> =>
  Effect.gen(function* () {
    const type = (request.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase()
    const yaml = YAML_TYPES.has(type)
    if (!yaml && !isJsonType(type)) {
      return yield* badRequest(
        `content-type: must be application/json, application/yaml or text/yaml; got ${JSON.stringify(type)}`
      )
    }
    const text = yield* Effect.orDie(request.text)
    const document = yield* Either.match(yaml ? parseYaml(text) : parseJson(text), {
      onLeft: (error) => Effect.fail(badRequest(error)),
      onRight: Effect.succeed
    })
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
      return yield* badRequest(`the policy must be ${yaml ? "a YAML mapping" : "a JSON object"}`)
    }
    return yield* Either.match(decodePolicyDocument(document, scope), {
      onLeft: (error) => Effect.fail(badRequest(error)),
      onRight: Effect.succeed
    })
  })

/**
 * A parsed document as a policy of `scope`, normalised (every default, `meta.scope` filled in), or
 * what is wrong with it; `field` prefixes every path (`policy.forbidden[0].pattern: …`) when the
 * policy is a member of a larger body.
 */
export const decodePolicyDocument = (
  document: unknown,
  scope: PolicyScope,
  field = ""
): Either.Either<Policy, string> => {
  const at = (path: string) => (field === "" ? path : path === "" ? field : `${field}.${path}`)
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    return Either.left(`${at("")}${field === "" ? "the policy" : ":"} must be a JSON object`)
  }
  const decoded = decodePolicy(document)
  if (Either.isLeft(decoded)) return Either.left(describe(decoded.left, field))
  const policy = decoded.right
  if (policy.meta.scope !== undefined && policy.meta.scope !== scope) {
    return Either.left(
      `${at("meta.scope")}: must be "${scope}" for ${scope === "org" ? "an organization's" : "an agent's"} policy; got "${policy.meta.scope}"`
    )
  }
  const normalised: Policy = { ...policy, meta: { ...policy.meta, scope } }
  // Hashed with JCS, which refuses text that is not Unicode (a lone surrogate from a \ud800 escape).
  if (tryCanonicalJson(normalised) === undefined) {
    return Either.left(
      `${at("")}${field === "" ? "the policy" : ":"} contains a string that is not valid Unicode (a lone surrogate)`
    )
  }
  return Either.right(normalised)
}
