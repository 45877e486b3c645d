/**
 * The text of a `tools/call` result, as the agent would read it (issue 28 item 5, docs/mcp.md): the
 * `text` of each `content[]` text item and of each embedded text resource, then the string values of
 * `structuredContent`, joined by new lines. Images, audio and blobs carry no text the judge reads.
 * The result is untrusted JSON: every member is checked for its type, nothing is cast.
 */
import { resultText } from "../providers/ToolResults.js"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The result's text; `undefined` when `result` is not an object (not a tool result at all). */
export const callResultText = (result: unknown): string | undefined => {
  if (!isRecord(result)) return undefined
  const parts: Array<string> = []
  const content = result["content"]
  if (Array.isArray(content))
    for (const item of content) {
      if (!isRecord(item)) continue
      if (item["type"] === "text" && typeof item["text"] === "string") parts.push(item["text"])
      const resource = item["resource"]
      if (item["type"] === "resource" && isRecord(resource) && typeof resource["text"] === "string")
        parts.push(resource["text"])
    }
  const structured = result["structuredContent"]
  if (structured !== undefined) {
    const text = resultText(structured)
    if (text !== "") parts.push(text)
  }
  return parts.join("\n")
}
