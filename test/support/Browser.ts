/**
 * Debian's Chromium driven by playwright-core, for the browser tests (test/browser/). Chromium is
 * found at CHROMIUM_PATH or /usr/bin/chromium; without it the browser tests skip outside CI and
 * fail in CI (`CI=true`) with one clear message, as the integration servers do
 * (test/support/IntegrationServers.ts). `.ci/run` installs it.
 *
 * Each launch gets a fresh profile (a new --user-data-dir, removed on close) and flags that keep
 * Chromium from reaching the network on its own (updates, sync, field trials, QUIC), so the only
 * requests are the page's: the tests assert none leaves the loopback server.
 * Screenshots go to test-artifacts/ (gitignored; CI keeps the folder as an artifact).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { inCi } from "./IntegrationServers.js"

export const chromiumPath = (): string => {
  const configured = process.env.CHROMIUM_PATH
  return configured === undefined || configured === "" ? "/usr/bin/chromium" : configured
}

/** Why Chromium cannot run here, or undefined when it can. */
export const chromiumMissing = (): string | undefined =>
  existsSync(chromiumPath())
    ? undefined
    : `Chromium not found at ${chromiumPath()}: install Debian's chromium (apt-get install chromium, as .ci/run does) ` +
      "or set CHROMIUM_PATH; browser tests must run in CI"

/** Whether this run skips the browser tests: never in CI, else when Chromium is missing. */
export const skipBrowser = (): boolean => !inCi() && chromiumMissing() !== undefined

export const CHROMIUM_ARGS: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--no-proxy-server"
]

export interface Browser {
  readonly context: BrowserContext
  /** A new tab of the given viewport size. */
  readonly page: (width: number, height: number) => Promise<Page>
  readonly close: () => Promise<void>
}

/** Launches Chromium with a fresh profile; throws with `chromiumMissing()`'s message when it is absent. */
export const launchBrowser = async (): Promise<Browser> => {
  const missing = chromiumMissing()
  if (missing !== undefined) throw new Error(missing)
  const profile = mkdtempSync(join(tmpdir(), "candor-chromium-"))
  // launchPersistentContext is how playwright takes a --user-data-dir of ours (launch() refuses the flag).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: [...CHROMIUM_ARGS],
    timeout: 20_000
  })
  return {
    context,
    page: async (width, height) => {
      const page = await context.newPage()
      await page.setViewportSize({ width, height })
      return page
    },
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}

export const ARTIFACTS_DIR = resolve(import.meta.dirname, "../../test-artifacts")

/** Where a screenshot named `name` goes: test-artifacts/<folder>/<name>.png (the folder made on demand). */
export const artifactPath = (folder: string, name: string): string => {
  const dir = join(ARTIFACTS_DIR, folder)
  mkdirSync(dir, { recursive: true })
  return join(dir, `${name.replace(/[^A-Za-z0-9._-]+/g, "-")}.png`)
}

/**
 * The browser's globals, for the functions passed to `page.evaluate`: the project compiles without
 * TypeScript's DOM library (Node code must not type-check against `window`), so a test reads them
 * through `globalThis as unknown as Dom`, which compiles to plain `globalThis` in the page.
 */
export interface Dom {
  readonly document: any
  readonly DOMParser: any
  readonly getComputedStyle: (element: any) => any
}
