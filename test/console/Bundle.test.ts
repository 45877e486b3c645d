/**
 * The console's first-load budget (docs/console.md): the script a browser needs before the first
 * page shows (the entry of index.html and every chunk it imports statically, from Vite's manifest)
 * is under 250 KB gzip. Built here into a temporary folder, so the figure is today's source's; pages
 * are dynamic imports and do not count. Also: nothing in the build points outside the origin.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { build } from "vite"

const BUDGET_BYTES = 250 * 1024
const config = fileURLToPath(new URL("../../console/vite.config.ts", import.meta.url))

interface ManifestChunk {
  readonly file: string
  readonly isEntry?: boolean
  readonly imports?: ReadonlyArray<string>
  readonly dynamicImports?: ReadonlyArray<string>
  readonly css?: ReadonlyArray<string>
}

/** The entry's chunk and everything it imports statically, transitively. */
const firstLoadFiles = (manifest: Readonly<Record<string, ManifestChunk>>): ReadonlyArray<string> => {
  const entry = Object.keys(manifest).find((key) => manifest[key]!.isEntry === true)
  if (entry === undefined) throw new Error("no entry in the manifest")
  const seen = new Set<string>()
  const visit = (key: string) => {
    if (seen.has(key)) return
    seen.add(key)
    for (const imported of manifest[key]?.imports ?? []) visit(imported)
  }
  visit(entry)
  return [...seen].map((key) => manifest[key]!.file)
}

describe("console bundle", () => {
  it(
    "first load is under 250 KB of gzip script; pages load on demand; nothing external",
    { timeout: 120_000 },
    async () => {
      const outDir = mkdtempSync(join(tmpdir(), "candor-console-"))
      try {
        await build({ configFile: config, build: { outDir, emptyOutDir: true }, logLevel: "silent" })
        const manifest = JSON.parse(readFileSync(join(outDir, ".vite/manifest.json"), "utf8")) as Record<
          string,
          ManifestChunk
        >
        const first = firstLoadFiles(manifest)
        const html = readFileSync(join(outDir, "index.html"), "utf8")
        // The document loads the entry (and preloads only its static imports).
        const scripts = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/console\/([^"]+\.js)"/g)].map(
          (m) => m[1]
        )
        for (const script of scripts) expect(first).toContain(script)

        const gzipped = first.reduce((sum, file) => sum + gzipSync(readFileSync(join(outDir, file))).length, 0)
        console.log(`console first-load script: ${first.length} files, ${(gzipped / 1024).toFixed(1)} KB gzip`)
        expect(gzipped).toBeLessThan(BUDGET_BYTES)

        // Each page is its own chunk, reached only through a dynamic import.
        const entry = Object.values(manifest).find((chunk) => chunk.isEntry === true)!
        expect(entry.dynamicImports?.length ?? 0).toBeGreaterThanOrEqual(6)
        for (const page of ["Fleet", "Feed", "Agent", "Verify", "Webhooks", "Organization"])
          expect(first.some((file) => file.includes(`/${page}-`))).toBe(false)

        // Offline: no script, style or font from another origin anywhere in the build.
        for (const file of readdirSync(join(outDir, "assets"))) {
          const text = readFileSync(join(outDir, "assets", file), "utf8")
          expect(text, file).not.toMatch(/(?:src|href)=["']https?:\/\/|@import\s+url\(["']?https?:|fonts\.googleapis/)
        }
        expect(html).not.toMatch(/https?:\/\//)
      } finally {
        rmSync(outDir, { recursive: true, force: true })
      }
    }
  )
})
