/**
 * Costly tool-policy evaluations, spread over turns of the gateway's event loop so that no tenant's
 * policy holds the thread every other tenant's requests wait on (issue 24).
 *
 * A request's evaluation first gets `SYNC_STEPS` on the request path itself, which is all a usual
 * request needs (its tools are names the policy has seen, or the policy's globs are names, prefixes
 * and suffixes: core/GlobSet.ts). Whatever is left runs here: one slice of `SLICE_STEPS` per turn of
 * the event loop for the whole gateway (a `setImmediate` each, so the sockets' I/O of that turn is
 * served between two slices), the owners taking turns (round robin by organization, or by credential
 * for an agent without one) and each owner's evaluations in arrival order. A tenant that makes its
 * own evaluations costly so waits for its own slices; others wait at most one slice per turn.
 *
 * Steps are core/GlobSet.ts's (about one word operation each, names and findings weighted to match):
 * bench/PolicyMatch.ts measures 5 to 15 ns each on the bench machine.
 */
import * as Effect from "effect/Effect"
import type { PolicyEvaluator } from "../../core/Policy.js"
import type { Policy } from "../../core/schema/Policy.js"
import { policyEvaluationsSliced } from "../metrics/GatewayMetrics.js"

/**
 * Steps an evaluation may take on the request path before the rest is sliced: about a millisecond,
 * enough for a request at the caps (512 new names of 128 characters) against a usual policy of
 * 1,000 rules (docs/benchmarks.md).
 */
export const SYNC_STEPS = 100_000

/** Steps per slice, one slice per turn of the event loop: about half a millisecond. */
export const SLICE_STEPS = 50_000

/**
 * A request's policy evaluation in progress, by the request's bytes: the effectful path goes on from
 * where the synchronous path's budget ran out, for the same policy object.
 */
const evaluations = new WeakMap<Uint8Array, { readonly policy: Policy; readonly evaluator: PolicyEvaluator }>()

/**
 * The request's policy evaluation: the one a previous call started for the request's bytes and this
 * policy object, or a new one. Its own tenant's turn in `slices`: the organization, else the credential.
 */
export const evaluatorFor = (bytes: Uint8Array, policy: Policy, make: () => PolicyEvaluator) => {
  const started = evaluations.get(bytes)
  // Already given the request path's budget once: whatever is left goes to the slices.
  if (started !== undefined && started.policy === policy) return { evaluator: started.evaluator, budget: 0 }
  const evaluator = make()
  evaluations.set(bytes, { policy, evaluator })
  return { evaluator, budget: SYNC_STEPS }
}

interface Task {
  readonly step: (budget: number) => boolean
}

export class PolicySlices {
  /** Each owner's tasks, owners in the order of their next turn. */
  private readonly owners = new Map<string, Array<Task>>()
  private turn: ReturnType<typeof setImmediate> | undefined

  constructor(private readonly sliceSteps: number = SLICE_STEPS) {}

  /** Tasks waiting, as `candor_gateway_policy_evaluations_sliced` shows them (one gateway per process). */
  waiting = 0

  private counted(change: number) {
    this.waiting += change
    policyEvaluationsSliced.unsafeUpdate(this.waiting, [])
  }

  /**
   * Runs `run` (an evaluator's: `undefined` until done) a slice per turn until it is done. Interrupted,
   * the task leaves the queue.
   */
  evaluate<A>(owner: string, run: (budget: number) => A | undefined): Effect.Effect<A> {
    return Effect.async<A>((resume) => {
      const task: Task = {
        step: (budget) => {
          let result: A | undefined
          try {
            result = run(budget)
          } catch (defect) {
            resume(Effect.die(defect))
            return true
          }
          if (result === undefined) return false
          resume(Effect.succeed(result))
          return true
        }
      }
      const tasks = this.owners.get(owner)
      if (tasks === undefined) this.owners.set(owner, [task])
      else tasks.push(task)
      this.counted(1)
      this.schedule()
      return Effect.sync(() => this.remove(owner, task))
    })
  }

  private schedule() {
    this.turn ??= setImmediate(() => this.slice())
  }

  /** One slice of the first task of the owner whose turn it is; that owner then goes last. */
  private slice() {
    this.turn = undefined
    const next = this.owners.entries().next()
    if (next.done) return
    const [owner, tasks] = next.value
    this.owners.delete(owner)
    const task = tasks[0]!
    if (task.step(this.sliceSteps)) {
      tasks.shift()
      this.counted(-1)
    }
    if (tasks.length > 0) this.owners.set(owner, tasks)
    if (this.owners.size > 0) this.schedule()
  }

  private remove(owner: string, task: Task) {
    const tasks = this.owners.get(owner)
    if (tasks === undefined) return
    const i = tasks.indexOf(task)
    if (i >= 0) {
      tasks.splice(i, 1)
      this.counted(-1)
    }
    if (tasks.length === 0) this.owners.delete(owner)
  }
}
