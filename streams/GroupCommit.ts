/**
 * Group commit: the batches of all partitions a worker consumes, committed together.
 *
 * Each partition is one sequential consumer, so at a steady rate spread over 64 partitions each of
 * them holds only a few events at a time; committing each alone costs a dozen statements for a
 * handful of rows and keeps as many transactions open as there are partitions. Here partitions hand
 * their attested batches to a few committer fibers, and each committer stores whatever is waiting
 * in one `commitBatch`: the transaction count follows the database's pace, not the partition count.
 *
 * Batches of one request never mix with another's agents (an agent lives in one partition, and a
 * partition waits for its request before it sends the next), so merging changes nothing the
 * compare-and-set checks. When a merged commit conflicts, each request is committed on its own so
 * only the batch that lost its race sees the conflict. So too when it fails while the database
 * still answers (`reachable`): one batch the database refuses must not take other partitions'
 * batches with it. A failure while the database is unreachable fails every request at once.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { CommitInput, CommitResult, StoreError } from "../adapters/store/Store.js"

export interface GroupCommitOptions {
  /** Transactions in flight at once (each on its own connection). */
  readonly concurrency: number
  /** A committer stops adding waiting batches to its transaction once it holds this many inputs. */
  readonly maxInputs: number
  /**
   * When a committer finds fewer inputs waiting than `gatherInputs`, it waits `gatherMs` for more
   * before it commits (0: never waits). For a database where each statement costs far more than a
   * row (PGlite plans the commit's statement anew each time): at a low rate, several requests share
   * a statement instead of one each, for a few milliseconds of commit latency.
   */
  readonly gatherMs?: number
  readonly gatherInputs?: number
}

export const defaultGroupCommitOptions: GroupCommitOptions = { concurrency: 2, maxInputs: 2_000 }

/**
 * On a database of one connection (embedded PGlite, which also runs on the worker's own thread), a
 * second committer gains nothing: it would take the batches waiting when the first one starts, then
 * wait for the connection, and each transaction would carry half as many. One committer gathers
 * everything that arrived while the previous transaction ran: the fewest, largest statements.
 */
export const singleConnectionGroupCommitOptions: GroupCommitOptions = {
  ...defaultGroupCommitOptions,
  concurrency: 1,
  gatherMs: 5,
  gatherInputs: 64
}

interface Request {
  readonly inputs: ReadonlyArray<CommitInput>
  readonly done: Deferred.Deferred<CommitResult, StoreError>
}

export type Commit = (inputs: ReadonlyArray<CommitInput>) => Effect.Effect<CommitResult, StoreError>

/** `commitBatch` shared by concurrent callers; the committers stop when the scope closes. */
export const makeGroupCommit = (
  commitBatch: Commit,
  options: GroupCommitOptions = defaultGroupCommitOptions,
  /** Succeeds while the database answers (`Store.ping`). */
  reachable: Effect.Effect<void, unknown> = Effect.void
): Effect.Effect<Commit, never, Scope.Scope> =>
  Effect.gen(function* () {
    const waiting = yield* Queue.unbounded<Request>()
    yield* Effect.addFinalizer(() => Queue.shutdown(waiting))

    const settle = (request: Request, result: Either.Either<CommitResult, StoreError>) =>
      Deferred.complete(request.done, Either.match(result, { onLeft: Effect.fail, onRight: Effect.succeed }))

    /** The first waiting request, then whichever others are waiting, up to `maxInputs` (see `gatherMs`). */
    const groupFrom = (first: Request) =>
      Effect.gen(function* () {
        const group = [first]
        let size = first.inputs.length
        let gathered = false
        while (size < options.maxInputs) {
          const next = yield* Queue.poll(waiting)
          if (Option.isNone(next)) {
            if (gathered || !(size < (options.gatherInputs ?? 0) && (options.gatherMs ?? 0) > 0)) break
            gathered = true
            yield* Effect.sleep(options.gatherMs!)
            continue
          }
          group.push(next.value)
          size += next.value.inputs.length
        }
        return group
      })

    const commitGroup = (group: ReadonlyArray<Request>) =>
      Effect.gen(function* () {
        const result = yield* Effect.either(commitBatch(group.flatMap((request) => request.inputs)))
        const split =
          group.length > 1 &&
          (Either.isRight(result) ? result.right._tag === "Conflict" : Either.isRight(yield* Effect.either(reachable)))
        if (split) {
          // Someone else's batch lost a race, or was refused: find out whose, without failing the others.
          yield* Effect.forEach(
            group,
            (request) => Effect.flatMap(Effect.either(commitBatch(request.inputs)), (own) => settle(request, own)),
            {
              discard: true
            }
          )
          return
        }
        for (const request of group) yield* settle(request, result)
      })

    // A request taken off the queue is always settled: a committer stopped mid-commit interrupts its waiters.
    const committer = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(Queue.take(waiting)), groupFrom).pipe(
        Effect.flatMap((group) =>
          restore(commitGroup(group)).pipe(
            Effect.onInterrupt(() => Effect.forEach(group, (request) => Deferred.interrupt(request.done)))
          )
        )
      )
    )
    for (let i = 0; i < options.concurrency; i++) yield* Effect.forkScoped(Effect.forever(committer))

    return (inputs) =>
      inputs.length === 0
        ? Effect.succeed({ _tag: "Committed" } as const)
        : Effect.flatMap(Deferred.make<CommitResult, StoreError>(), (done) =>
            Effect.zipRight(Queue.offer(waiting, { inputs, done }), Deferred.await(done))
          )
  })
