/**
 * The byte search behind "no secret's bytes may appear in the database or the data dir": every
 * spelling a secret could take on disk or in a dump, and where any of them occurs.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

/** The secret as UTF-8, and its UTF-8 bytes as hex (either case), base64 and base64url. */
export const spellings = (secret: string): ReadonlyArray<Buffer> => {
  const bytes = Buffer.from(secret, "utf8")
  return [
    bytes,
    Buffer.from(bytes.toString("hex")),
    Buffer.from(bytes.toString("hex").toUpperCase()),
    Buffer.from(bytes.toString("base64").replace(/=+$/, "")),
    Buffer.from(bytes.toString("base64url"))
  ]
}

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })

/** The files under `dir` that hold any of `needles`, with the index of the needle found. */
export const filesHolding = (dir: string, needles: ReadonlyArray<Buffer>): ReadonlyArray<string> =>
  filesUnder(dir).flatMap((path) => {
    const content = readFileSync(path)
    const found = needles.findIndex((needle) => content.includes(needle))
    return found === -1 ? [] : [`${path} (spelling ${found})`]
  })

/** Whether `text` holds any of `needles`. */
export const holds = (text: Buffer, needles: ReadonlyArray<Buffer>): boolean =>
  needles.some((needle) => text.includes(needle))
