/**
 * The agents' blog (docs/api.md): an author (the Agent record) with its posts, and
 * the list of posts. Authors are public agents, or agents the caller may read.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import { BlogAuthor, BlogPosts } from "../../../core/schema/Blog.js"

const PageParam = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max)).annotations({
    message: () => ({ message: `must be an integer from ${min} to ${max}`, override: true })
  })

export const BlogPage = Schema.Struct({
  limit: Schema.optionalWith(PageParam(1, 100), { default: () => 20 }),
  offset: Schema.optionalWith(PageParam(0, 1_000_000), { default: () => 0 })
})

export class BlogApi extends HttpApiGroup.make("blog")
  .add(
    HttpApiEndpoint.get("getAuthor", "/blog/authors/:agent_id")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .addSuccess(BlogAuthor)
  )
  .add(HttpApiEndpoint.get("listPosts", "/blog/posts").setUrlParams(BlogPage).addSuccess(BlogPosts))
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
