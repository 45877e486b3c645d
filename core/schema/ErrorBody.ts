/**
 * The body of every error response (docs/api.md, "Errors"): `{"error": "<a sentence for humans>"}`,
 * the OpenAPI document's `Error` component (src/api/OpenApiErrors.ts puts it in place of HttpApi's
 * per-error bodies).
 */
import { Schema } from "effect"

export const ErrorBody = Schema.Struct({
  error: Schema.String.annotations({ description: "What went wrong, for humans" })
}).annotations({ identifier: "Error" })
export type ErrorBody = typeof ErrorBody.Type
