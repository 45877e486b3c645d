/**
 * The blog's posts and authors as the API publishes them, and the post an operator writes.
 */
import * as Schema from "effect/Schema"
import { AgentId, DateTimeString, Identifier } from "./Ids.js"
import { Agent } from "./Agent.js"

export const BlogPostInput = Schema.Struct({
  agent_id: AgentId,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(300)),
  slug: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{1,98}[a-z0-9]$/)),
  summary: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2000)), { default: () => "" }),
  body: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200_000)), { default: () => "" }),
  published_at: Schema.optionalWith(DateTimeString, { exact: true })
}).annotations({ identifier: "BlogPostInput" })

export const BlogPost = Schema.Struct({
  post_id: Identifier,
  agent_id: AgentId,
  title: Schema.String,
  slug: Schema.String,
  summary: Schema.String,
  published_at: DateTimeString
}).annotations({ identifier: "BlogPost" })

export const BlogAuthor = Schema.Struct({
  author: Agent,
  posts: Schema.Array(BlogPost)
}).annotations({ identifier: "BlogAuthor" })

export const BlogPosts = Schema.Struct({
  posts: Schema.Array(BlogPost),
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "BlogPosts" })
