/**
 * The console's built files (console/dist, written by `npm run build:console`, which `npm ci` runs),
 * read once into memory: the whole bundle is a few hundred kilobytes, and serving from a map costs
 * no file system call per request and cannot be steered outside the folder by a crafted path.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

export interface ConsoleAsset {
  readonly body: Uint8Array
  readonly contentType: string
  /** Hashed asset names never change content: cached for a year. The document is revalidated. */
  readonly cacheControl: string
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".txt": "text/plain; charset=utf-8"
}

export const CONSOLE_DIST = fileURLToPath(new URL("../../console/dist", import.meta.url))

/** Dot folders (Vite's `.vite/manifest.json`) are build metadata, not served. */
const walk = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".")) return []
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })

/** `/`-separated paths under the console (`index.html`, `assets/index-….js`) → their asset; undefined: not built. */
export const loadConsoleAssets = (dist: string = CONSOLE_DIST): ReadonlyMap<string, ConsoleAsset> | undefined => {
  if (!existsSync(join(dist, "index.html"))) return undefined
  const assets = new Map<string, ConsoleAsset>()
  for (const path of walk(dist)) {
    const name = relative(dist, path).split(sep).join("/")
    assets.set(name, {
      body: readFileSync(path),
      contentType: CONTENT_TYPES[extname(name)] ?? "application/octet-stream",
      cacheControl: name.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache"
    })
  }
  return assets
}
