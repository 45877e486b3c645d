import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { GatewayEvent } from "../core/schema/Event.js"
const evs = JSON.parse(readFileSync("/tmp/realevents.json", "utf8")) as Array<unknown>
const dec = Schema.decodeUnknownEither(GatewayEvent)
let bad = 0; for (const e of evs) if (dec(e)._tag === "Left") bad++
console.log(evs.length, "events, undecodable", bad)
for (const [name, f] of [["decodeUnknownEither", (e: unknown) => dec(e)], ["JSON.parse(stringify)", (e: unknown) => JSON.parse(JSON.stringify(e))]] as const) {
  for (let i = 0; i < 3000; i++) f(evs[i % evs.length])
  const N = 20000; const t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) f(evs[i % evs.length])
  console.log(name, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), "µs")
}
