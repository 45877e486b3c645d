/**
 * The console's built files in memory: every file under the build by its `/` path, hashed assets
 * cached for a year and the document revalidated, build metadata (Vite's `.vite/manifest.json`) not
 * served, and no map at all without a build.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadConsoleAssets } from "../../../adapters/http/ConsoleAssets.js"

describe("console assets", () => {
  it("maps the build's files, skips dot folders, and is absent without a build", () => {
    const dist = mkdtempSync(join(tmpdir(), "candor-dist-"))
    try {
      expect(loadConsoleAssets(dist)).toBeUndefined()
      mkdirSync(join(dist, "assets"))
      mkdirSync(join(dist, ".vite"))
      writeFileSync(join(dist, "index.html"), "<!doctype html>")
      writeFileSync(join(dist, "assets", "index-abc.js"), "export {}")
      writeFileSync(join(dist, ".vite", "manifest.json"), "{}")
      const assets = loadConsoleAssets(dist)!
      expect([...assets.keys()].sort()).toEqual(["assets/index-abc.js", "index.html"])
      expect(assets.get("index.html")).toMatchObject({
        contentType: "text/html; charset=utf-8",
        cacheControl: "no-cache"
      })
      expect(assets.get("assets/index-abc.js")).toMatchObject({
        contentType: "text/javascript; charset=utf-8",
        cacheControl: "public, max-age=31536000, immutable"
      })
    } finally {
      rmSync(dist, { recursive: true, force: true })
    }
  })
})
