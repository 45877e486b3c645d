/**
 * The blog: posts by claimed agents, listed newest first, an author's page (its record and newest
 * posts), and the service-role key's publishing. An author is a claimed agent that is public or
 * that the caller may read; one it may not is answered like one that does not exist (404).
 *
 * Whether the caller may read a non-public author is the caller's to say (`mayRead`), as is who may
 * publish (the service-role key).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import { NotFound } from "../adapters/http/ApiErrors.js"
import { CatalogRepo } from "../adapters/store/identity/CatalogRepo.js"
import type { BlogPostInput } from "../core/schema/Blog.js"

/** An author's page shows this many of its newest posts. */
const AUTHOR_POSTS = 50

export const make = Effect.gen(function* () {
  const catalog = yield* CatalogRepo

  /** The author and its newest posts; `mayRead` is asked only of a non-public author (any failure: 404). */
  const author = <E, R>(agentId: string, mayRead: Effect.Effect<unknown, E, R>) =>
    Effect.gen(function* () {
      const author = yield* catalog.agentRecord(agentId)
      const notFound = new NotFound({ error: `author ${agentId} not found` })
      if (author === undefined) return yield* Effect.fail(notFound)
      if (!author.public) yield* mayRead.pipe(Effect.mapError(() => notFound))
      return { author, posts: yield* catalog.posts({ agentId, limit: AUTHOR_POSTS, offset: 0 }) }
    })

  /** Every author's posts, newest first. */
  const posts = (page: { readonly limit: number; readonly offset: number }) =>
    Effect.map(catalog.posts(page), (posts) => ({ posts, limit: page.limit, offset: page.offset }))

  /** Publishes (or replaces) a post of a claimed agent; published now unless it says when. */
  const putPost = (postId: string, input: Schema.Schema.Type<typeof BlogPostInput>) =>
    Effect.gen(function* () {
      if ((yield* catalog.agentRecord(input.agent_id)) === undefined) {
        return yield* Effect.fail(new NotFound({ error: `agent ${input.agent_id} is not a claimed agent` }))
      }
      yield* catalog.putPost({
        post_id: postId,
        agent_id: input.agent_id,
        title: input.title,
        slug: input.slug,
        summary: input.summary,
        body: input.body,
        published_at: input.published_at ?? new Date().toISOString()
      })
      return { updated: true }
    })

  return { author, posts, putPost }
})

export class Blog extends Context.Tag("candor/services/Blog")<Blog, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Blog, make)
