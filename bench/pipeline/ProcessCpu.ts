/**
 * CPU time by process, from /proc, as the acceptance tests count it: utime + stime of each process
 * (all its threads), in clock ticks of 10 ms. The shared servers are narrowed to what serves this
 * run, since other work shares the machine: PostgreSQL's backends of the run's database plus the
 * server's own background processes (checkpointer, WAL writer, autovacuum, the postmaster), and the
 * nats-server process listening on the run's NATS port (not every nats-server on the machine).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"

/** utime + stime of a process so far, ms; 0 once it is gone. */
export const procCpuMs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** Resident set size of a process now, bytes (VmRSS); 0 once it is gone. */
export const procRssBytes = (pid: number): number => {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kb === undefined ? 0 : Number(kb) * 1024
  } catch {
    return 0
  }
}

const parentOf = (pid: number): number | undefined => {
  try {
    const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return ppid === undefined ? undefined : Number(ppid)
  } catch {
    return undefined
  }
}

/**
 * The PostgreSQL processes serving `sql`'s database: its client backends, the server's background
 * processes (a background worker of another database excluded), and the postmaster.
 */
export const postgresPids = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<number>, unknown> =>
  Effect.map(
    sql<{ pid: number }>`
      select pid from pg_stat_activity
      where datname = current_database() or (backend_type <> 'client backend' and datname is null)`,
    (rows) => {
      const pids = rows.map((row) => Number(row.pid))
      const postmaster = pids.length === 0 ? undefined : parentOf(pids[0]!)
      return postmaster === undefined ? pids : [...pids, postmaster]
    }
  )

/** The pid of the process listening on TCP `port` (IPv4 or IPv6), from /proc/net and the processes' sockets. */
export const listeningPid = (port: number): number | undefined => {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0")
  const inodes = new Set<string>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = ""
    try {
      text = readFileSync(table, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/)
      // local_address is `<ip>:<port>` in hex; state 0A is LISTEN; the inode is the 10th field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A") inodes.add(fields[9]!)
    }
  }
  if (inodes.size === 0) return undefined
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${entry}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`)
        if (target.startsWith("socket:[") && inodes.has(target.slice(8, -1))) return Number(entry)
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined
}

/**
 * A reading of several processes at once, and the CPU each set of them used between two readings.
 * Processes may come and go between readings (PostgreSQL backends): one that appears counts from
 * zero, one that is gone takes its time with it (the run's pools live for the whole row).
 */
export interface CpuReading {
  readonly at: ReadonlyMap<number, number>
}

export const readCpu = (pids: Iterable<number>): CpuReading => {
  const at = new Map<number, number>()
  for (const pid of pids) at.set(pid, procCpuMs(pid))
  return { at }
}

/** CPU ms used by `pids` from `before` to `after` (pids read in `after`). */
export const cpuBetween = (before: CpuReading, after: CpuReading, pids: Iterable<number>): number => {
  let total = 0
  for (const pid of pids) total += Math.max(0, (after.at.get(pid) ?? 0) - (before.at.get(pid) ?? 0))
  return total
}

/**
 * Starts counting the CPU of named groups of processes (pids read again at the end: PostgreSQL's
 * backends change); the returned effect gives each group's ms since.
 */
export const startMeter = <K extends string>(
  groups: Readonly<Record<K, Effect.Effect<ReadonlyArray<number>, unknown>>>
) =>
  Effect.gen(function* () {
    const names = Object.keys(groups) as Array<K>
    const before = new Map<K, CpuReading>()
    for (const name of names) before.set(name, readCpu(yield* groups[name]))
    return Effect.gen(function* () {
      const used = {} as Record<K, number>
      for (const name of names) {
        const pids = yield* groups[name]
        used[name] = cpuBetween(before.get(name)!, readCpu(pids), pids)
      }
      return used
    })
  })
