/**
 * The analysis queue's fairness (issue 24), on the data structure alone: a tenant under its fair share
 * never loses a job to another's flood, jobs are given up oldest first from the longest queue, each
 * tenant's jobs leave in order, slots go round robin, and a quarter of them wait for newcomers.
 * Properties with fast-check (fixed seed, bounded runs) and a few cases by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { FairQueue } from "../../../adapters/gateway/FairQueue.js"
import { fuzzParameters } from "../../support/Fuzz.js"

interface Job {
  readonly tenant: string
  readonly seq: number
}

describe("FairQueue", () => {
  it("serves tenants round robin, each in its own order", () => {
    const queue = new FairQueue<Job>({ capacity: 100, concurrency: 100 })
    for (let seq = 0; seq < 3; seq++) for (const tenant of ["a", "b", "c"]) queue.offer(tenant, { tenant, seq })
    const served: Array<string> = []
    for (let next = queue.take(); next !== undefined; next = queue.take()) served.push(`${next.tenant}${next.job.seq}`)
    expect(served).toEqual(["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"])
  })

  it("keeps a quarter of the slots for tenants with nothing running; a lone tenant gets the rest", () => {
    const queue = new FairQueue<Job>({ capacity: 100, concurrency: 8 })
    for (let seq = 0; seq < 20; seq++) queue.offer("flood", { tenant: "flood", seq })
    let taken = 0
    while (queue.take() !== undefined) taken++
    expect(taken).toBe(6)
    queue.offer("victim", { tenant: "victim", seq: 0 })
    expect(queue.take()).toMatchObject({ tenant: "victim" })
    expect(queue.running).toBe(7)
  })

  it("a full queue gives up the oldest job of the longest queue: a tenant within its share keeps its own", () => {
    const queue = new FairQueue<Job>({ capacity: 4, concurrency: 1 })
    for (let seq = 0; seq < 3; seq++) expect(queue.offer("flood", { tenant: "flood", seq })).toBeUndefined()
    expect(queue.offer("victim", { tenant: "victim", seq: 0 })).toBeUndefined()
    // The victim within its share (2 of 4): the flood gives up its oldest.
    expect(queue.offer("victim", { tenant: "victim", seq: 1 })).toEqual({ tenant: "flood", seq: 0 })
    // Past its share, the victim's own oldest goes.
    expect(queue.offer("victim", { tenant: "victim", seq: 2 })).toEqual({ tenant: "victim", seq: 0 })
    // Even: the arriving tenant gives up its own.
    expect(queue.offer("flood", { tenant: "flood", seq: 3 })).toEqual({ tenant: "flood", seq: 1 })
    expect(queue.size).toBe(4)
  })

  it("properties: bounded, nothing lost, per-tenant order, and no tenant under its share ever gives up a job", () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant("offer" as const), tenant: fc.constantFrom("a", "b", "c", "d") }),
      fc.record({ kind: fc.constant("take" as const) }),
      fc.record({ kind: fc.constant("release" as const), index: fc.nat() })
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(operation, { maxLength: 200 }),
        (capacity, concurrency, operations) => {
          const queue = new FairQueue<Job>({ capacity, concurrency })
          const queued = new Map<string, Array<number>>() // a model of each tenant's FIFO
          const running: Array<string> = []
          const seqs = new Map<string, number>()
          for (const op of operations) {
            if (op.kind === "offer") {
              const seq = seqs.get(op.tenant) ?? 0
              seqs.set(op.tenant, seq + 1)
              queued.set(op.tenant, [...(queued.get(op.tenant) ?? []), seq])
              const shed = queue.offer(op.tenant, { tenant: op.tenant, seq })
              if (shed !== undefined) {
                const own = queued.get(shed.tenant)!
                // Oldest first, from a tenant holding at least as many as any other (at or over its share).
                expect(shed.seq).toBe(own[0])
                const lengths = [...queued.values()].map((jobs) => jobs.length).filter((n) => n > 0)
                expect(own.length).toBe(Math.max(...lengths))
                // The longest holds at least the fair share: a tenant below it never gives up a job.
                expect(own.length * lengths.length).toBeGreaterThanOrEqual(capacity + 1)
                own.shift()
              }
            } else if (op.kind === "take") {
              const next = queue.take()
              if (next !== undefined) {
                expect(next.job.seq).toBe(queued.get(next.tenant)![0]) // each tenant's jobs in order
                queued.get(next.tenant)!.shift()
                running.push(next.tenant)
              } else {
                // Never stalled: jobs wait only while some judge slot is taken.
                const waiting = [...queued.values()].some((jobs) => jobs.length > 0)
                expect(!waiting || running.length > 0).toBe(true)
              }
            } else if (running.length > 0) {
              const [tenant] = running.splice(op.index % running.length, 1)
              queue.release(tenant!)
            }
            const total = [...queued.values()].reduce((sum, jobs) => sum + jobs.length, 0)
            expect(queue.size).toBe(total)
            expect(total).toBeLessThanOrEqual(capacity)
            expect(queue.running).toBe(running.length)
            expect(running.length).toBeLessThanOrEqual(concurrency)
          }
        }
      ),
      fuzzParameters(300)
    )
  })
})
