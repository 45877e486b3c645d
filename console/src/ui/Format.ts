/** Small display helpers shared by the pages: relative times, counts, errors. */

/** "12 s ago", "5 min ago", "3 h ago", "4 d ago"; "never" for null. */
export const ago = (iso: string | null, now: number = Date.now()): string => {
  if (iso === null) return "never"
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`
  return `${Math.floor(seconds / 86_400)} d ago`
}

export const count = (n: number): string => n.toLocaleString("en-US")

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The local time of an RFC 3339 instant, to the second. */
export const clock = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString("en-GB", { hour12: false })
}

export const dateTime = (iso: string | null): string => {
  if (iso === null) return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { hour12: false })
}
