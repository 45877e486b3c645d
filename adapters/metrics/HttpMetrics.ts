/**
 * Request metrics of the HTTP server: requests by route, method and status, and a latency
 * histogram by route and method. Routes are the declared path templates (`/v1/agents/:agent_id`),
 * never raw paths, so ids do not explode the label space.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

export const requests = Metric.counter("http_requests_total", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})

export const duration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
  "HTTP request latency in seconds, by route template and method"
)

/** A matcher from request paths to the templates of the given `:param` routes. */
export const routeMatcher = (templates: Iterable<string>) => {
  const compiled = [...new Set(templates)]
    // Literal segments first: `/v1/agents/claim` before `/v1/agents/:agent_id`.
    .sort((a, b) => (b.match(/\/[^:/][^/]*/g)?.length ?? 0) - (a.match(/\/[^:/][^/]*/g)?.length ?? 0))
    .map((template) => ({
      template,
      regex: new RegExp(
        "^" +
          template
            .split("/")
            .map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
            .join("/") +
          "/?$"
      )
    }))
  return (path: string): string => compiled.find((route) => route.regex.test(path))?.template ?? "unmatched"
}
