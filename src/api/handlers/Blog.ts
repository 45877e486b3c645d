/**
 * The blog, through the Blog service (services/Blog.ts): an author is a claimed agent that is public
 * or readable by the caller.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Blog } from "../../../services/Blog.js"
import { CandorApi } from "../Api.js"

/** Whether the caller may read the agent (asked of a non-public author only). */
const mayRead = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    return yield* (yield* AccessControl).agent(principal, agentId, "read")
  })

export const BlogLive = HttpApiBuilder.group(CandorApi, "blog", (handlers) =>
  Effect.map(Blog, (blog) =>
    handlers
      .handle("getAuthor", ({ path }) => blog.author(path.agent_id, mayRead(path.agent_id)))
      .handle("listPosts", ({ urlParams }) => blog.posts({ limit: urlParams.limit, offset: urlParams.offset }))
  )
)
