/**
 * The gateway's analysis queue, shared fairly by tenant (issue 24): one tenant's flood never drops,
 * delays beyond its share, or fail-opens another tenant's exchanges.
 *
 * A tenant is the fairness key the Inspector gives: the agent's organization, else (an unclaimed or
 * personal agent) the hash of its provider credential. Neither can be multiplied cheaply: agent
 * names (`x-candor-agent`) are free, but every name of one key is one tenant, and a new key is a new
 * provider account (a key the provider refuses leaves no exchange to analyse).
 *
 * - **Queue space.** Every tenant has its own FIFO; together they hold at most `capacity` jobs.
 *   When a job arrives at a full queue, the tenant with the longest FIFO (the arriving one on a tie)
 *   gives up its oldest job, which `offer` returns: the caller records it unanalysed (`over_share`),
 *   without a judge, never dropping it. The longest FIFO is at least the fair share
 *   (capacity ÷ tenants), so a tenant under its share never loses a job to another's flood.
 * - **Judge slots.** `take` serves the tenants round robin, first those holding fewer slots than
 *   their share, `(concurrency − reserve) ÷ tenants` (at least 1); then, work-conserving, any tenant,
 *   while more than `reserve` slots stay free. The reserve (a quarter of the slots) is kept for
 *   tenants with nothing running, so a newcomer starts at once even when another tenant's calls hang
 *   until their deadline; a lone tenant uses the other three quarters.
 *
 * Synchronous and allocation-light: a `Map` of tenants in round-robin order (a served tenant moves
 * to the end), each with an array FIFO. Cost per operation: O(tenants) at worst (a full queue, or
 * every tenant at its share), O(1) in the usual case.
 */

/** An array used as a FIFO: `shift` moves a head index, the array is compacted now and then. */
class Fifo<J> {
  private items: Array<J | undefined> = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: J): void {
    this.items.push(item)
  }

  shift(): J | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head++] = undefined
    if (this.head >= 64 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }
}

interface Tenant<J> {
  readonly queue: Fifo<J>
  /** Judge slots it holds. */
  running: number
}

export interface FairQueueOptions {
  /** Jobs queued at most, across tenants (ANALYSIS_QUEUE capacity). */
  readonly capacity: number
  /** Judge slots (ANALYSIS_CONCURRENCY). */
  readonly concurrency: number
}

export class FairQueue<J> {
  private readonly tenants = new Map<string, Tenant<J>>()
  private queued = 0
  private busy = 0
  private readonly reserve: number

  constructor(private readonly options: FairQueueOptions) {
    this.reserve = Math.floor(options.concurrency / 4)
  }

  /** Jobs waiting for a judge slot. */
  get size(): number {
    return this.queued
  }

  /** Judge slots taken. */
  get running(): number {
    return this.busy
  }

  /**
   * Queues `job` for `tenant`. Returns the job that must be recorded unanalysed instead (over
   * share): the oldest of the longest FIFO when the queue is full, else `undefined`.
   */
  offer(tenant: string, job: J): J | undefined {
    const own = this.tenantOf(tenant)
    own.queue.push(job)
    this.queued++
    if (this.queued <= this.options.capacity) return undefined
    let longest = own
    let longestKey = tenant
    for (const [key, other] of this.tenants) {
      if (other.queue.length > longest.queue.length) {
        longest = other
        longestKey = key
      }
    }
    const shed = longest.queue.shift()
    this.queued--
    this.forgetIfIdle(longestKey, longest)
    return shed
  }

  /** The next job to judge and its tenant (which now holds a slot), or `undefined` when none may start now. */
  take(): { readonly tenant: string; readonly job: J } | undefined {
    if (this.busy >= this.options.concurrency || this.queued === 0) return undefined
    const share = Math.max(1, Math.floor((this.options.concurrency - this.reserve) / this.tenants.size))
    for (const [key, tenant] of this.tenants)
      if (tenant.queue.length > 0 && tenant.running < share) return this.serve(key, tenant)
    if (this.options.concurrency - this.busy <= this.reserve) return undefined
    for (const [key, tenant] of this.tenants) if (tenant.queue.length > 0) return this.serve(key, tenant)
    return undefined
  }

  /** A judge slot `tenant` took is free again. */
  release(tenant: string): void {
    const state = this.tenants.get(tenant)
    this.busy--
    if (state === undefined) return
    state.running--
    this.forgetIfIdle(tenant, state)
  }

  private serve(key: string, tenant: Tenant<J>) {
    const job = tenant.queue.shift()!
    this.queued--
    tenant.running++
    this.busy++
    // Round robin: the tenant just served goes last.
    this.tenants.delete(key)
    this.tenants.set(key, tenant)
    return { tenant: key, job }
  }

  private tenantOf(key: string): Tenant<J> {
    let tenant = this.tenants.get(key)
    if (tenant === undefined) this.tenants.set(key, (tenant = { queue: new Fifo<J>(), running: 0 }))
    return tenant
  }

  private forgetIfIdle(key: string, tenant: Tenant<J>): void {
    if (tenant.queue.length === 0 && tenant.running === 0) this.tenants.delete(key)
  }
}
