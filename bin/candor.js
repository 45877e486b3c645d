#!/usr/bin/env -S node --max-semi-space-size=64 --min-semi-space-size=64
// The flags: src/NodeFlags.ts says why (`npm start` and the benches pass the same).
// Runs the TypeScript sources directly: tsx compiles them on import, so `npm start` and
// `npx candor` need no build step. The tsconfig is named explicitly because tsx would otherwise
// look for one in the caller's working directory.
import { fileURLToPath } from "node:url"
import { register } from "tsx/esm/api"

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) })
await import("../src/Main.ts")
