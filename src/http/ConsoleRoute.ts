/**
 * `/console` on the API port: the console's single-page application (console/, docs/console.md).
 * Every path under /console that is not a built file answers the document, so a reload of any view
 * works; views are hash routes, so that is rare. A tree without a build answers 503 saying how to
 * build it. The pages call the API on the same origin with the signed-in credential.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ConsoleAsset, loadConsoleAssets } from "../../adapters/http/ConsoleAssets.js"

export const CONSOLE_PATH = "/console"

/**
 * Only the console's own origin: no inline script, no third-party host; styles may be inline
 * (uPlot and CodeMirror set element styles), images may be data: URLs (badges, charts).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

const notBuilt = HttpServerResponse.unsafeJson(
  { error: "the console is not built: run `npm run build:console` (npm ci does it)" },
  { status: 503 }
)

const respond = (asset: ConsoleAsset) =>
  HttpServerResponse.uint8Array(asset.body, {
    contentType: asset.contentType,
    headers: { ...SECURITY_HEADERS, "cache-control": asset.cacheControl }
  })

export const ConsoleRoute = Layer.unwrapEffect(
  Effect.sync(() => {
    const assets = loadConsoleAssets()
    const document = assets?.get("index.html")
    const serve = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      if (assets === undefined || document === undefined) return notBuilt
      const path = new URL(request.url, "http://console").pathname
      const name = path.slice(CONSOLE_PATH.length).replace(/^\/+/, "")
      return respond(assets.get(name) ?? document)
    })
    return HttpLayerRouter.addAll([
      // The router matches "/console/" here too; asset URLs are absolute (/console/assets/…), so no redirect.
      HttpLayerRouter.route("GET", CONSOLE_PATH, serve),
      HttpLayerRouter.route("GET", `${CONSOLE_PATH}/*`, serve)
    ])
  })
)
