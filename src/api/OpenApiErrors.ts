/**
 * The OpenAPI document describes the error bodies the API really sends (see ErrorBodies.ts):
 * HttpApi would document each tagged error with its `_tag`, and decode failures as
 * `HttpApiDecodeError {issues, message}`; every error response is `{"error": string}` instead, and
 * a 429 carries `Retry-After`. Applied as the API's `OpenApi.Transform`, so /v1/openapi.json and
 * /docs agree.
 */
import type * as OpenApi from "@effect/platform/OpenApi"
import * as OpenApiJsonSchema from "@effect/platform/OpenApiJsonSchema"
import type * as Context from "effect/Context"
import { ErrorBody } from "../../core/schema/ErrorBody.js"

const ERROR_SCHEMA = "Error"

/** The `Error` component, from its schema (core/schema/ErrorBody.ts), inline rather than a reference to itself. */
const errorSchema = OpenApiJsonSchema.makeWithDefs(ErrorBody, { defs: {}, topLevelReferenceStrategy: "skip" })

/** Components that only ever described the rewritten bodies. */
const REPLACED = [
  "HttpApiDecodeError",
  "Issue",
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "TooManyRequests",
  "InternalError",
  "ServiceUnavailable"
]

const DESCRIPTIONS: Record<string, string> = {
  "400": "Malformed body or parameters; the message names the field",
  "401": "Missing or invalid credentials",
  "403": "Valid credentials, insufficient permissions (or a write during impersonation)",
  "404": "Not found, or not visible to the caller",
  "409": "Conflicts with what is stored (a name already taken, a limit reached)",
  "413": "Request body too large",
  "429": "Rate limit exceeded; retry after the Retry-After seconds",
  "500": "Server error",
  "503": "The database cannot be reached right now; try again shortly"
}

/** A component describing a tagged error as HttpApi would send it: `{_tag, error}` and nothing else. */
const isTaggedErrorBody = (schema: unknown): boolean => {
  const properties = (schema as { readonly properties?: unknown } | null)?.properties
  if (typeof properties !== "object" || properties === null) return false
  const keys = Object.keys(properties).sort()
  return keys.length === 2 && keys[0] === "_tag" && keys[1] === "error"
}

/** The part of an OpenAPI operation this rewrite reads. */
interface Operation {
  readonly responses?: Record<string, { readonly description?: string }>
}

// Typed as the annotation it is: OpenApi.Transform hands over the document as loosely typed JSON.
export const rewriteErrorBodies: Context.Tag.Service<typeof OpenApi.Transform> = (spec) => {
  const schemas: Record<string, unknown> = { ...spec.components?.schemas }
  for (const name of REPLACED) delete schemas[name]
  // The domain services' errors (services/): tagged `{error}` bodies, rewritten like the ones above.
  for (const [name, schema] of Object.entries(schemas)) if (isTaggedErrorBody(schema)) delete schemas[name]
  schemas[ERROR_SCHEMA] = errorSchema
  const paths: Record<string, unknown> = {}
  for (const [path, operations] of Object.entries(spec.paths ?? {}) as Array<[string, Record<string, unknown>]>) {
    paths[path] = Object.fromEntries(
      Object.entries(operations).map(([method, value]) => {
        const operation = value as Operation | null
        if (typeof operation !== "object" || operation === null || operation.responses === undefined)
          return [method, operation]
        const responses = Object.fromEntries(
          Object.entries(operation.responses).map(([status, response]) => {
            if (Number(status) < 400) return [status, response]
            return [
              status,
              {
                description: DESCRIPTIONS[status] ?? response.description,
                ...(status === "429" || status === "503"
                  ? { headers: { "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait" } } }
                  : {}),
                content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } }
              }
            ]
          })
        )
        return [method, { ...operation, responses }]
      })
    )
  }
  return { ...spec, paths, components: { ...spec.components, schemas } }
}
