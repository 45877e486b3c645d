/**
 * RFC 6902 JSON Patch: a list of operations, each addressing a member with an RFC 6901 JSON
 * Pointer. Candor's differ (core/JsonPatch.ts) writes only `add`, `remove` and `replace`; the
 * schema names all six so a patch from any tool reads.
 */
import { Schema } from "effect"

const Pointer = Schema.String.annotations({ description: "RFC 6901 JSON Pointer" })

export const JsonPatchOperation = Schema.Union(
  Schema.Struct({ op: Schema.Literal("add"), path: Pointer, value: Schema.Unknown }),
  Schema.Struct({ op: Schema.Literal("remove"), path: Pointer }),
  Schema.Struct({ op: Schema.Literal("replace"), path: Pointer, value: Schema.Unknown }),
  Schema.Struct({ op: Schema.Literal("move"), from: Pointer, path: Pointer }),
  Schema.Struct({ op: Schema.Literal("copy"), from: Pointer, path: Pointer }),
  Schema.Struct({ op: Schema.Literal("test"), path: Pointer, value: Schema.Unknown })
).annotations({ identifier: "JsonPatchOperation" })
export type JsonPatchOperation = typeof JsonPatchOperation.Type

export const JsonPatch = Schema.Array(JsonPatchOperation).annotations({
  identifier: "JsonPatch",
  description: "RFC 6902 JSON Patch"
})
export type JsonPatch = typeof JsonPatch.Type
