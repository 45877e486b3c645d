/**
 * Reading the raw header list Node keeps beside its parsed `headers` (`req.rawHeaders`, `[name,
 * value, …]` as received): the only place a repeated header shows, since Node joins most repeats and
 * drops some (a second `Authorization`) while every one of them is forwarded. Names compare without
 * case and without a lowercased copy, so a pass over a usual request's dozen headers allocates nothing.
 */

/** Whether a raw header name is `lower` (a lowercase token), whatever its case. */
export const isHeaderName = (candidate: string, lower: string): boolean => {
  if (candidate.length !== lower.length) return false
  for (let i = 0; i < lower.length; i++) {
    const c = candidate.charCodeAt(i)
    const t = lower.charCodeAt(i)
    if (c !== t && !(t >= 0x61 && t <= 0x7a && (c | 0x20) === t)) return false
  }
  return true
}

/** How many times `lower` occurs among the raw headers. */
export const rawCount = (raw: ReadonlyArray<string>, lower: string): number => {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if (isHeaderName(raw[i]!, lower)) count++
  return count
}

/** Every value of `lower` among the raw headers, in order. */
export const rawValues = (raw: ReadonlyArray<string>, lower: string): Array<string> => {
  const values: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) if (isHeaderName(raw[i]!, lower)) values.push(raw[i + 1]!)
  return values
}
