/** The blog: an author is a claimed agent that is public or readable by the caller. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

/** An author's page shows this many of its newest posts. */
const AUTHOR_POSTS = 50

export const BlogLive = HttpApiBuilder.group(CandorApi, "blog", (handlers) =>
  handlers
    .handle("getAuthor", ({ path }) =>
      Effect.gen(function* () {
        const catalog = yield* CatalogRepo
        const author = yield* catalog.agentRecord(path.agent_id)
        const notFound = new NotFound({ error: `author ${path.agent_id} not found` })
        if (author === undefined) return yield* Effect.fail(notFound)
        if (!author.public) {
          const principal = yield* CurrentPrincipal
          yield* (yield* AccessControl).agent(principal, path.agent_id, "read").pipe(Effect.mapError(() => notFound))
        }
        return { author, posts: yield* catalog.posts({ agentId: path.agent_id, limit: AUTHOR_POSTS, offset: 0 }) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listPosts", ({ urlParams }) =>
      Effect.gen(function* () {
        const posts = yield* (yield* CatalogRepo).posts({ limit: urlParams.limit, offset: urlParams.offset })
        return { posts, limit: urlParams.limit, offset: urlParams.offset }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
