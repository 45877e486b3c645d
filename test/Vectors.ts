/**
 * Where the official test vectors live: `test/vectors/` in the repository (their origins and licences
 * are in its README). A missing file makes the tests fail loudly rather than skip, so CI can never
 * pass without them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = resolve(fileURLToPath(new URL("..", import.meta.url)))
export const vectorsDir = resolve(repoRoot, "test/vectors")

export const vectorPath = (...parts: ReadonlyArray<string>): string => {
  const path = join(vectorsDir, ...parts)
  if (!existsSync(path)) throw new Error(`test vectors not found at ${path} (test/vectors/ belongs to the repository)`)
  return path
}

export const readVectorJson = <A = unknown>(...parts: ReadonlyArray<string>): A =>
  JSON.parse(readFileSync(vectorPath(...parts), "utf8")) as A

/** Every `.json` file below a vector folder, as [path relative to it, parsed content]. */
export const walkVectorJson = <A = unknown>(...parts: ReadonlyArray<string>): Array<[string, A]> => {
  const root = vectorPath(...parts)
  const out: Array<[string, A]> = []
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name)
      const relName = rel === "" ? name : `${rel}/${name}`
      if (statSync(full).isDirectory()) walk(full, relName)
      else if (name.endsWith(".json")) out.push([relName, JSON.parse(readFileSync(full, "utf8")) as A])
    }
  }
  walk(root, "")
  return out
}
