/**
 * The console's build: a single-page application served by Candor at /console (src/http/ConsoleRoute.ts).
 * `npm ci` builds it (`prepare` runs `build:console`) into console/dist, so `npm start` serves it with no
 * further step. Everything is bundled (no CDN, no external fonts): the console works offline.
 */
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  root: here("."),
  base: "/console/",
  // Preact's automatic JSX runtime (no Babel plugin needed).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  // The verify page runs core/'s own verifiers (and the prover's verdict-proof verifier) in the
  // browser: the few Node modules they import are mapped to small browser versions in src/platform/
  // (console/tsconfig.json's `paths` say the same to the type checker). See docs/console.md.
  resolve: {
    alias: {
      "node:crypto": here("src/platform/NodeCrypto.ts"),
      "node:buffer": here("src/platform/NodeBuffer.ts"),
      "node:fs": here("src/platform/NodeFs.ts"),
      "node:url": here("src/platform/NodeUrl.ts")
    }
  },
  build: {
    outDir: here("dist"),
    emptyOutDir: true,
    target: "es2022",
    // Source maps stay out of the served bundle's budget (250 KB compressed script on first load).
    sourcemap: false,
    reportCompressedSize: false,
    // .vite/manifest.json: which chunks the entry imports statically, for the first-load budget test
    // (test/console/Bundle.test.ts). Not served: ConsoleAssets skips dot folders.
    manifest: true
  },
  logLevel: "warn"
})
