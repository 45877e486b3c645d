/**
 * Names on the bus: partitions are stable across processes and versions, and every subject maps to
 * the stream that stores it (or to none).
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import {
  consumerName,
  deadLetterSubject,
  eventSubject,
  matchesPrefix,
  partitionOf,
  partitionOfSubject,
  streamNames,
  streamOf,
  wildcardsOf
} from "../../../adapters/bus/Subjects.js"

describe("subjects", () => {
  it("partition = first four bytes of SHA-256(agent_id), big-endian, mod P", () => {
    const agent = "agt-0123456789abcdef0123456789abcdef"
    const first4 = parseInt(createHash("sha256").update(agent).digest("hex").slice(0, 8), 16)
    expect(partitionOf(agent)).toBe(first4 % 64)
    expect(partitionOf(agent, 8)).toBe(first4 % 8)
    expect(eventSubject(agent, "candor", 8)).toBe(`candor.events.${first4 % 8}.${agent}`)
    expect(partitionOf("agt-x")).toBe(partitionOf("agt-x"))
  })

  it("maps subjects to streams, refusing what no stream stores", () => {
    expect(streamOf("candor.events.3.agt-a", "candor")).toBe("events")
    expect(streamOf("candor.alerts.drift.agt-a", "candor")).toBe("decisions")
    expect(streamOf("candor.containment.agt-a", "candor")).toBe("decisions")
    expect(streamOf("candor.dead.events.3.agt-a", "candor")).toBe("dead")
    for (const s of [
      "candor.events.3",
      "candor.events.03.agt-a",
      "candor.events.x.agt-a",
      "candor.other.a",
      "other.events.3.a",
      "candor.alerts",
      "candor.alerts.*",
      "candor.alerts..a",
      "candor.alerts.a b"
    ]) {
      expect(streamOf(s, "candor")).toBeUndefined()
    }
    expect(partitionOfSubject("candor.events.12.agt-a", "candor")).toBe(12)
    expect(partitionOfSubject("candor.events.07.agt-a", "candor")).toBeUndefined()
  })

  it("names streams, consumers and dead letters after the prefix", () => {
    expect(streamNames("candor")).toEqual({
      events: "CANDOR_EVENTS",
      decisions: "CANDOR_DECISIONS",
      dead: "CANDOR_DEAD"
    })
    expect(consumerName(7)).toBe("events-p07")
    expect(consumerName(7, 256)).toBe("events-p007")
    expect(deadLetterSubject("t1.events.3.agt-a", "t1")).toBe("t1.dead.events.3.agt-a")
  })

  it("prefixes match whole tokens, the same way in process and on NATS", () => {
    expect(matchesPrefix("candor.alerts.x", "candor.alerts.")).toBe(true)
    expect(matchesPrefix("candor.alerts", "candor.alerts.")).toBe(false)
    expect(matchesPrefix("candor.alerts", "candor.alerts")).toBe(true)
    expect(matchesPrefix("candor.alertsx.y", "candor.alerts")).toBe(false)
    expect(wildcardsOf("candor.alerts.")).toEqual(["candor.alerts.>"])
    expect(wildcardsOf("candor.alerts")).toEqual(["candor.alerts", "candor.alerts.>"])
  })
})
