/**
 * A setup file of the fast lane, run before each test file. That lane shares one module graph
 * between the files a worker runs (`isolate: false`, which saves each file importing Effect and the
 * product anew), and @effect/vitest's `layer(...)` rewrites the shared `it`'s `effect` and `scoped`
 * to run on its layer (without the test services when `excludeTestServices`), so a later file's
 * `it.effect` would run on another file's layer and the live clock. Each file starts from the
 * package's own methods again.
 */
import { it, makeMethods } from "@effect/vitest"

makeMethods(it)
