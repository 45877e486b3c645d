// The entry of a prover worker thread. Worker threads do not inherit the parent's TypeScript loader,
// so register tsx (as bin/candor.js does) before loading the worker itself.
import { fileURLToPath } from "node:url"
import { register } from "tsx/esm/api"

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) })
await import("./Worker.ts")
