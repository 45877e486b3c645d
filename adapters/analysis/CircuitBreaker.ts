/**
 * A small circuit breaker (`Ref` + `Clock`, so `TestClock` drives it): after `threshold`
 * consecutive counted failures the circuit opens for `resetAfter`; then one trial call is let
 * through (half-open). Its success closes the circuit, its failure opens it again.
 *
 * Which failures count is the caller's choice (`counts`): the LLM judge counts transport failures
 * and server errors, not unparseable answers, so a crafted thinking block that derails the judge's
 * output cannot switch analysis off for everyone.
 *
 * `makeKeyedCircuitBreaker` keeps one breaker per key (the LLM judge's: per tenant, the gateway's
 * fairness key), so one tenant whose calls fail or hang (a flood, thinking crafted to stall the
 * judge) opens its own circuit and nobody else's.
 */
import { Clock, Context, Data, Duration, Effect, Exit, Layer, Ref } from "effect"

export type CircuitState =
  | { readonly _tag: "Closed"; readonly failures: number }
  | { readonly _tag: "Open"; readonly until: number }
  | { readonly _tag: "HalfOpen" }

export class CircuitOpen extends Data.TaggedError("CircuitOpen")<{ readonly retryAt: number }> {}

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit; default 5 (AIP gateway). */
  readonly threshold?: number
  /** How long the circuit stays open; default 60 s. */
  readonly resetAfter?: Duration.DurationInput
}

export interface CircuitBreakerService {
  readonly protect: <A, E, R>(
    effect: Effect.Effect<A, E, R>,
    counts?: (error: E) => boolean
  ) => Effect.Effect<A, E | CircuitOpen, R>
  readonly state: Effect.Effect<CircuitState>
}

type Admission = { readonly _tag: "Run" } | { readonly _tag: "Reject"; readonly retryAt: number }

/** A breaker built synchronously (its state is a `Ref`): the keyed breaker makes one on a key's first call. */
const unsafeMakeCircuitBreaker = (options: CircuitBreakerOptions): CircuitBreakerService => {
  const threshold = options.threshold ?? 5
  const resetMillis = Duration.toMillis(options.resetAfter ?? Duration.seconds(60))
  const ref = Ref.unsafeMake<CircuitState>({ _tag: "Closed", failures: 0 })

  // Decide and update in one `modify`: two concurrent callers cannot both become the trial.
  const admit = (now: number) =>
    Ref.modify(ref, (state): [Admission, CircuitState] => {
      switch (state._tag) {
        case "Closed":
          return [{ _tag: "Run" }, state]
        case "Open":
          return now >= state.until
            ? [{ _tag: "Run" }, { _tag: "HalfOpen" }]
            : [{ _tag: "Reject", retryAt: state.until }, state]
        case "HalfOpen":
          return [{ _tag: "Reject", retryAt: now }, state]
      }
    })

  const record = (failed: boolean, now: number) =>
    Ref.update(ref, (state): CircuitState => {
      if (!failed) return { _tag: "Closed", failures: 0 }
      if (state._tag === "HalfOpen") return { _tag: "Open", until: now + resetMillis }
      if (state._tag === "Open") return state
      const failures = state.failures + 1
      return failures >= threshold ? { _tag: "Open", until: now + resetMillis } : { _tag: "Closed", failures }
    })

  const protect = <A, E, R>(effect: Effect.Effect<A, E, R>, counts: (error: E) => boolean = () => true) =>
    Effect.gen(function* () {
      const admission = yield* admit(yield* Clock.currentTimeMillis)
      if (admission._tag === "Reject") return yield* Effect.fail(new CircuitOpen({ retryAt: admission.retryAt }))
      return yield* effect.pipe(
        Effect.onExit((exit) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            if (Exit.isSuccess(exit)) return record(false, now)
            // An interrupted trial must not leave the circuit half-open forever.
            const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            const counted = failure === undefined || counts(failure)
            return counted ? record(true, now) : record(false, now)
          })
        )
      )
    })

  return { protect, state: Ref.get(ref) }
}

export const makeCircuitBreaker = (options: CircuitBreakerOptions = {}): Effect.Effect<CircuitBreakerService> =>
  Effect.sync(() => unsafeMakeCircuitBreaker(options))

export interface KeyedCircuitBreakerService {
  readonly protect: <A, E, R>(
    key: string,
    effect: Effect.Effect<A, E, R>,
    counts?: (error: E) => boolean
  ) => Effect.Effect<A, E | CircuitOpen, R>
  /** The key's state; a key never seen (or forgotten) is closed. */
  readonly state: (key: string) => Effect.Effect<CircuitState>
}

/** Keys remembered at most; past it the oldest key's breaker is forgotten (it starts closed again). */
const KEYED_BREAKERS = 10_000

/**
 * One breaker per key, made on the key's first call. Bounded (`maxKeys`): keys are tenants (an
 * organization, a provider credential's hash), which nobody can multiply cheaply.
 */
export const makeKeyedCircuitBreaker = (
  options: CircuitBreakerOptions = {},
  maxKeys: number = KEYED_BREAKERS
): Effect.Effect<KeyedCircuitBreakerService> =>
  Effect.sync(() => {
    const breakers = new Map<string, CircuitBreakerService>()
    const breakerOf = (key: string): CircuitBreakerService => {
      let breaker = breakers.get(key)
      if (breaker === undefined) {
        if (breakers.size >= maxKeys) breakers.delete(breakers.keys().next().value!)
        breakers.set(key, (breaker = unsafeMakeCircuitBreaker(options)))
      }
      return breaker
    }
    return {
      protect: (key, effect, counts) => Effect.suspend(() => breakerOf(key).protect(effect, counts)),
      state: (key) =>
        Effect.suspend(() => breakers.get(key)?.state ?? Effect.succeed<CircuitState>({ _tag: "Closed", failures: 0 }))
    }
  })

/** The breaker as a service, for callers that share one across judges. */
export class CircuitBreaker extends Context.Tag("candor/adapters/analysis/CircuitBreaker")<
  CircuitBreaker,
  CircuitBreakerService
>() {
  static readonly layer = (options: CircuitBreakerOptions = {}): Layer.Layer<CircuitBreaker> =>
    Layer.effect(CircuitBreaker, makeCircuitBreaker(options))
}
