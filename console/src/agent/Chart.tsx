/**
 * A uPlot line chart, loaded on demand (dynamic import): uPlot is only fetched when an agent page
 * draws a chart, so the console's first load stays small. The data is also given as a table for
 * screen readers and anyone who prefers numbers.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { Series } from "./Series.js"

const COLOURS = ["#1a7f37", "#9a6700", "#cf222e", "#0a58ca", "#8250df", "#bf3989", "#57606a", "#1b7c83"]

export const Chart = ({
  title,
  series,
  testId
}: {
  readonly title: string
  readonly series: Series
  readonly testId: string
}) => {
  const box = useRef<HTMLDivElement>(null)
  const [failed, setFailed] = useState<string | undefined>(undefined)
  useEffect(() => {
    const element = box.current
    if (element === null || series.x.length === 0) return
    let plot: { destroy: () => void } | undefined
    let cancelled = false
    import("./Plot.js").then(
      ({ uPlot }) => {
        if (cancelled) return
        const drawn = new uPlot(
          {
            title,
            width: Math.max(320, element.clientWidth),
            height: 220,
            series: [
              {},
              ...series.lines.map((line, i) => ({ label: line.label, stroke: COLOURS[i % COLOURS.length]!, width: 2 }))
            ],
            scales: { x: { time: true, range: [series.range[0], series.range[1]] } },
            // The x axis as drawn (seconds), for whoever checks that the points lie on it.
            hooks: {
              draw: [
                (u: { scales: Record<string, { min?: number | undefined; max?: number | undefined }> }) => {
                  element.dataset["xMin"] = String(u.scales["x"]?.min)
                  element.dataset["xMax"] = String(u.scales["x"]?.max)
                }
              ]
            },
            axes: [{ stroke: "currentColor" }, { stroke: "currentColor" }]
          },
          [series.x as Array<number>, ...series.lines.map((line) => line.values as Array<number>)],
          element
        )
        plot = drawn
        element.dataset["drawn"] = "true"
      },
      (error: unknown) => setFailed(String(error))
    )
    return () => {
      cancelled = true
      plot?.destroy()
    }
  }, [series, title])
  return (
    <figure class="chart" data-testid={testId} data-points={String(series.x.length)}>
      {series.x.length === 0 ? <p class="muted">{title}: no checkpoints yet.</p> : <div ref={box} aria-hidden="true" />}
      {failed === undefined ? null : <p class="error">The chart could not load: {failed}</p>}
      {series.x.length === 0 ? null : (
        <details>
          <summary>{title} as a table</summary>
          <table>
            <thead>
              <tr>
                <th scope="col">From</th>
                {series.lines.map((line) => (
                  <th scope="col">{line.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {series.x.map((t, i) => (
                <tr>
                  <td>{new Date(t * 1000).toLocaleString()}</td>
                  {series.lines.map((line) => (
                    <td>{line.values[i]}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </figure>
  )
}
