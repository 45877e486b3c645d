// The entry of the embedded default's backend thread (src/BackendThread.ts starts it). Worker threads
// do not inherit the parent's TypeScript loader, so register tsx (as bin/candor.js does) first.
import { fileURLToPath } from "node:url"
import { register } from "tsx/esm/api"

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) })
await import("./Backend.ts")
