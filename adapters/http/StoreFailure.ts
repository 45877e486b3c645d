/**
 * A store failure as the API answers it: 503 with Retry-After when the database cannot be reached
 * right now (clients try again), else 500 "internal error". Logged with its operation, never with
 * request data; the driver's message only where it cannot quote a credential.
 */
import * as Effect from "effect/Effect"
import type { StoreError } from "../store/Store.js"
import { isUnavailable } from "../store/Unavailable.js"
import { InternalError, ServiceUnavailable } from "./ApiErrors.js"

export const storeFailure =
  (message: string, options: { readonly logCause: boolean }) =>
  (error: StoreError): Effect.Effect<never, InternalError | ServiceUnavailable> =>
    isUnavailable(error)
      ? Effect.zipRight(
          Effect.logWarning(`${message}: database unreachable`).pipe(
            Effect.annotateLogs({ operation: error.operation })
          ),
          Effect.fail(new ServiceUnavailable({ error: "the database cannot be reached right now; try again shortly" }))
        )
      : Effect.zipRight(
          Effect.logError(message).pipe(
            Effect.annotateLogs({
              operation: error.operation,
              ...(options.logCause ? { cause: String(error.cause) } : {})
            })
          ),
          Effect.fail(new InternalError({ error: "internal error" }))
        )
