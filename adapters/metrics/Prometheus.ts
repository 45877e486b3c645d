/**
 * Effect metrics as Prometheus text exposition (format 0.0.4), with no exporter dependency:
 * counters and gauges as single samples, histograms as cumulative `_bucket{le=…}`, `_sum` and
 * `_count` series. Metrics sharing a name are grouped under one `# TYPE` line.
 */
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  readonly type: "counter" | "gauge" | "histogram"
  readonly help: string
  readonly samples: ReadonlyArray<Sample>
}

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')

const formatLabels = (labels: Readonly<Record<string, string>>) => {
  const entries = Object.entries(labels)
  return entries.length === 0 ? "" : `{${entries.map(([k, v]) => `${k}="${escape(v)}"`).join(",")}}`
}

const formatValue = (value: number) =>
  Number.isNaN(value) ? "NaN" : value === Infinity ? "+Inf" : value === -Infinity ? "-Inf" : String(value)

export const render = (families: ReadonlyArray<Family>): string =>
  families
    .map((family) =>
      [
        `# HELP ${family.name} ${family.help.replace(/\n/g, " ")}`,
        `# TYPE ${family.name} ${family.type}`,
        ...family.samples.map((s) => `${s.name}${formatLabels(s.labels)} ${formatValue(s.value)}`)
      ].join("\n")
    )
    .join("\n") + "\n"

/** The families of an Effect metric snapshot (frequency and summary metrics are skipped). */
export const fromSnapshot = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): ReadonlyArray<Family> => {
  const families = new Map<string, { type: Family["type"]; help: string; samples: Array<Sample> }>()
  const family = (name: string, type: Family["type"], help: string) => {
    let found = families.get(name)
    if (found === undefined) families.set(name, (found = { type, help, samples: [] }))
    return found
  }
  for (const { metricKey, metricState } of pairs) {
    const name = metricKey.name
    const help = Option.getOrElse(metricKey.description, () => name)
    const labels = Object.fromEntries(metricKey.tags.map((tag) => [tag.key, tag.value]))
    if (MetricState.isCounterState(metricState)) {
      family(name, "counter", help).samples.push({ name, labels, value: Number(metricState.count) })
    } else if (MetricState.isGaugeState(metricState)) {
      family(name, "gauge", help).samples.push({ name, labels, value: Number(metricState.value) })
    } else if (MetricState.isHistogramState(metricState)) {
      const samples = family(name, "histogram", help).samples
      for (const [le, count] of metricState.buckets) {
        samples.push({ name: `${name}_bucket`, labels: { ...labels, le: formatValue(le) }, value: count })
      }
      samples.push({ name: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: metricState.count })
      samples.push({ name: `${name}_sum`, labels, value: metricState.sum })
      samples.push({ name: `${name}_count`, labels, value: metricState.count })
    }
  }
  return [...families].map(([name, f]) => ({ name, ...f }))
}
