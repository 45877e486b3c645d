/**
 * Many tool globs compiled once (`*` any run of characters, `?` exactly one, anything else itself,
 * over UTF-16 code units, case-sensitive), matched against one name at a time: which of them match.
 * The tool policy (core/Policy.ts) compiles its forbidden rules, mapping globs and trigger globs into
 * one set per policy object.
 *
 * Why this shape (issue 24: a tenant's policy must not stall the gateway's one thread for others):
 * - Real policies are literal names (`bash`), prefix globs (`mcp__github__*`) and suffix globs
 *   (`*_delete`). Those cost O(name length) whatever their number: a hash lookup for names, a walk
 *   of a prefix trie and of a suffix trie (over the reversed name) for the rest, each stopping where
 *   the trie does.
 * - Every other glob (`?` anywhere, a `*` inside) is indexed by its longer literal anchor (the text
 *   before its first wildcard in the prefix trie, or after its last one in the suffix trie), so the
 *   walks also yield the only candidates worth testing; globs with neither anchor (`*a?b*c*`) are
 *   always candidates. A candidate is tested by simulating its automaton over the set of name
 *   positions as a bit vector: one AND and a shift per literal, a shift per `?`, a fill per `*`, so
 *   O(glob length × ⌈name length / 32⌉) with no backtracking at all, stopping as soon as no
 *   position is left.
 * - Options weighed and left: a DFA over all globs (eager or lazy) is O(name) per step only while
 *   its states stay few, and they do not: `*a*`, `*b*`, … make one state per subset of the infixes
 *   seen, and a fresh adversarial name builds a new state (O(globs) each) at nearly every character,
 *   which is the cost it was meant to avoid. Aho–Corasick over the literal pieces handles `*lit*lit*`
 *   by events, but `?` inside a piece turns it into dictionary matching with don't-cares, for which
 *   no O(name + output) algorithm with polynomial compilation is known; an adversary who writes both
 *   the globs and the names keeps that cost at O(globs) per name (1,000 globs × 512 names is ~512 k
 *   glob tests, far beyond 1 ms in any of these forms).
 * - So the worst case is bounded, counted and handed out in slices rather than wished away: every
 *   test reports its work in steps (`GlobCursor.steps`, about one word operation each), a match can
 *   stop after a budget of steps and resume (`run`), and the caller memoises results per policy and
 *   name and spreads a large evaluation over turns of the event loop (core/Policy.ts `policyEvaluator`,
 *   adapters/gateway/PolicySlices.ts). A name costs at most
 *   `96 + 3(n + 1) + 2 × globs + n × σ + Σ over candidates of (1 + length × (⌈(n + 1) / 32⌉ + 1))`
 *   steps, σ the distinct characters of the globs (a next-occurrence table each, built once per
 *   name): linear in the name and in the globs (test/core/GlobSet.test.ts checks it by counting,
 *   never by timing).
 */

/**
 * What starting a name costs in steps besides its trie walks: a hash lookup and a cursor, measured
 * (bench/PolicyMatch.ts) at a few dozen word operations' time.
 */
const NAME_STEPS = 96

/** A `?` in a compiled glob's middle (char codes are ≥ 0). */
const ANY_ONE = -1
/** A `*` (a run of them counts as one). */
const ANY_RUN = -2

/** A glob with a wildcard other than one leading or one trailing `*`: tested by simulation. */
interface Program {
  /** Glob ids with this (normalised) pattern. */
  readonly ids: Array<number>
  /** Literal text before the first wildcard, and after the last one. */
  readonly prefix: string
  readonly suffix: string
  /** From the first wildcard to the last, as char codes, `ANY_ONE` and `ANY_RUN`. */
  readonly middle: Int32Array
  /**
   * At each index of `middle` that follows a `*` and starts literal text ending at another `*`, that
   * text: the simulation then jumps to its first occurrence (`indexOf`), which is exact for `*text*`.
   */
  readonly runs: ReadonlyArray<string | undefined>
  /** Characters a name needs at least (everything but `*`), and whether that is also the most (no `*`). */
  readonly minLength: number
  readonly fixedLength: boolean
}

interface TrieNode {
  children: Map<number, TrieNode> | undefined
  /** Ids of the globs `<text to here>*` (prefix trie) or `*<text to here>` (suffix trie). */
  globs: Array<number> | undefined
  /** Programs whose anchor (prefix or suffix) is the text to here. */
  programs: Array<Program> | undefined
}

const newNode = (): TrieNode => ({ children: undefined, globs: undefined, programs: undefined })

/** The node for `text` (read backwards when `reversed`), made as needed. */
const nodeFor = (root: TrieNode, text: string, reversed: boolean): TrieNode => {
  let node = root
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(reversed ? text.length - 1 - i : i)
    node.children ??= new Map()
    let next = node.children.get(code)
    if (next === undefined) node.children.set(code, (next = newNode()))
    node = next
  }
  return node
}

const isWildcard = (code: number) => code === 42 /* * */ || code === 63 /* ? */

/** `**` and longer runs match what one `*` matches. */
const normalise = (glob: string): string => glob.replace(/\*{2,}/g, "*")

export class GlobSet {
  private readonly exact = new Map<string, Array<number>>()
  private readonly prefixes = newNode()
  private readonly suffixes = newNode()
  /** Programs with no literal anchor: candidates for every name. */
  private readonly floating: Array<Program> = []
  /** Programs by normalised glob, so repeated globs share one. */
  private readonly programs = new Map<string, Program>()
  /** Every glob's length, summed (for cost bounds). */
  readonly size: number

  /** `globs[i]` gets id `i`. */
  constructor(globs: ReadonlyArray<string>) {
    let size = 0
    globs.forEach((raw, id) => {
      size += raw.length
      const glob = normalise(raw)
      let first = -1
      let last = -1
      for (let i = 0; i < glob.length; i++) {
        if (isWildcard(glob.charCodeAt(i))) {
          if (first < 0) first = i
          last = i
        }
      }
      if (first < 0) return void push(this.exact, glob, id)
      const star = (i: number) => glob.charCodeAt(i) === 42
      if (first === last && star(first) && first === glob.length - 1) {
        return void (nodeFor(this.prefixes, glob.slice(0, -1), false).globs ??= []).push(id)
      }
      if (first === last && star(first) && first === 0) {
        return void (nodeFor(this.suffixes, glob.slice(1), true).globs ??= []).push(id)
      }
      const known = this.programs.get(glob)
      if (known !== undefined) return void known.ids.push(id)
      let minLength = 0
      const middle = new Int32Array(last - first + 1)
      for (let i = first; i <= last; i++) {
        const code = glob.charCodeAt(i)
        middle[i - first] = code === 42 ? ANY_RUN : code === 63 ? ANY_ONE : code
      }
      for (let i = 0; i < glob.length; i++) if (!star(i)) minLength++
      const runs = Array.from<string | undefined>({ length: middle.length })
      for (const match of glob.slice(first, last + 1).matchAll(/\*([^*?]+)(?=\*)/g)) {
        runs[match.index + 1] = match[1]
      }
      const program: Program = {
        ids: [id],
        prefix: glob.slice(0, first),
        suffix: glob.slice(last + 1),
        middle,
        runs,
        minLength,
        fixedLength: !glob.includes("*")
      }
      this.programs.set(glob, program)
      // Indexed by the longer anchor: the walk then yields it only for names that have that anchor.
      if (program.prefix.length > 0 && program.prefix.length >= program.suffix.length) {
        ;(nodeFor(this.prefixes, program.prefix, false).programs ??= []).push(program)
      } else if (program.suffix.length > 0) {
        ;(nodeFor(this.suffixes, program.suffix, true).programs ??= []).push(program)
      } else {
        this.floating.push(program)
      }
    })
    this.size = size
  }

  /** Starts matching `name`: the cheap part (lookups, trie walks) is done here; `run` tests the candidates. */
  start(name: string): GlobCursor {
    const n = name.length
    const exact = this.exact.get(name)
    const found: Array<number> = exact === undefined ? [] : [...exact]
    const candidates: Array<Program> = []
    let steps = NAME_STEPS
    // The prefix trie along the name, then the suffix trie along it backwards: each yields the
    // `prefix*` / `*suffix` globs that match and the programs anchored there.
    for (let reversed = 0; reversed < 2; reversed++) {
      let node: TrieNode | undefined = reversed === 0 ? this.prefixes : this.suffixes
      for (let i = 0; node !== undefined; i++) {
        steps++
        if (node.globs !== undefined) for (const id of node.globs) found.push(id)
        if (node.programs !== undefined) for (const program of node.programs) candidates.push(program)
        if (i === n || node.children === undefined) break
        node = node.children.get(name.charCodeAt(reversed === 0 ? i : n - 1 - i))
      }
    }
    for (const program of this.floating) candidates.push(program)
    steps += found.length + candidates.length
    return new GlobCursor(name, found, candidates, steps)
  }

  /** The ids of the globs matching `name`, ascending, at whatever cost (tests and small sets). */
  match(name: string): ReadonlyArray<number> {
    const cursor = this.start(name)
    cursor.run(Number.POSITIVE_INFINITY)
    return cursor.ids()
  }
}

const push = (map: Map<string, Array<number>>, key: string, id: number) => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [id])
  else list.push(id)
}

/** One name's match in progress: candidates tested in order, as far as each `run`'s budget goes. */
export class GlobCursor {
  /** Work done so far, in steps. */
  steps: number
  private next = 0
  /** Positions of each character of the name (made on the first candidate). */
  private occurrences: { readonly ascii: Int32Array; readonly other: Map<number, Int32Array> } | undefined
  private readonly words: number
  private readonly topMask: number
  private positions: Int32Array | undefined
  /** Next occurrence tables by character (`nextOf`), made as candidates need them. */
  private nextTables: Map<number, Int32Array> | undefined

  constructor(
    private readonly name: string,
    private readonly found: Array<number>,
    private readonly candidates: ReadonlyArray<Program>,
    steps: number
  ) {
    this.steps = steps
    const n = name.length
    // Positions 0..n, one bit each.
    this.words = (n >>> 5) + 1
    this.topMask = (n & 31) === 31 ? -1 : (1 << ((n & 31) + 1)) - 1
  }

  /** Whether every candidate has been tested. */
  get done(): boolean {
    return this.next === this.candidates.length
  }

  /** Tests candidates until done or until `budget` more steps are spent (at least one candidate per call). */
  run(budget: number): boolean {
    const limit = this.steps + budget
    while (this.next < this.candidates.length) {
      const program = this.candidates[this.next++]!
      if (this.test(program)) this.found.push(...program.ids)
      if (this.steps >= limit) break
    }
    return this.done
  }

  /** The ids of the globs matching, ascending (once `done`). */
  ids(): ReadonlyArray<number> {
    return this.found.sort((a, b) => a - b)
  }

  /** For one character, at each position i of the name, the first position ≥ i that holds it (-1: none). */
  private nextOf(code: number): Int32Array {
    this.nextTables ??= new Map()
    let table = this.nextTables.get(code)
    if (table === undefined) {
      const name = this.name
      table = new Int32Array(name.length + 1)
      let at = -1
      table[name.length] = -1
      for (let i = name.length - 1; i >= 0; i--) {
        if (name.charCodeAt(i) === code) at = i
        table[i] = at
      }
      this.steps += name.length
      this.nextTables.set(code, table)
    }
    return table
  }

  /**
   * Where each character of the name is, as position bits: ASCII in one flat table (`code × words`),
   * anything else in a map. Made on the first candidate that gets that far.
   */
  private occurrencesOf(): { readonly ascii: Int32Array; readonly other: Map<number, Int32Array> } {
    if (this.occurrences !== undefined) return this.occurrences
    const words = this.words
    const ascii = new Int32Array(128 * words)
    const other = new Map<number, Int32Array>()
    for (let i = 0; i < this.name.length; i++) {
      const code = this.name.charCodeAt(i)
      if (code < 128) ascii[code * words + (i >>> 5)]! |= 1 << (i & 31)
      else {
        let bits = other.get(code)
        if (bits === undefined) other.set(code, (bits = new Int32Array(words)))
        bits[i >>> 5]! |= 1 << (i & 31)
      }
    }
    this.steps += this.name.length
    return (this.occurrences = { ascii, other })
  }

  /**
   * Whether `program` matches: its anchors by comparison, then its middle simulated over the set of
   * positions in the name it can have reached (bit i: the glob so far matches `name[0..i)`). After a
   * `*` that set is every position from some q on, kept as q alone while it stays one (a `?` moves
   * it, `*text*` jumps to the first occurrence of text): the usual globs then cost a few steps.
   */
  private test(program: Program): boolean {
    const name = this.name
    const n = name.length
    this.steps++
    if (n < program.minLength || (program.fixedLength && n !== program.minLength)) return false
    const { prefix, suffix } = program
    if ((prefix !== "" && !name.startsWith(prefix)) || (suffix !== "" && !name.endsWith(suffix))) return false
    const words = this.words
    const top = words - 1
    const topMask = this.topMask
    const s = (this.positions ??= new Int32Array(words))
    for (let w = 0; w < words; w++) s[w] = 0
    const start = prefix.length
    s[start >>> 5] = 1 << (start & 31)
    const { middle, runs } = program
    const length = middle.length
    let occurrences = this.occurrences
    /** Whether the set is every position from `from` to n (and `s` is stale). */
    let interval = false
    let from = 0
    let steps = 0
    let k = 0
    for (; k < length; k++) {
      const op = middle[k]!
      if (interval) {
        steps++
        const run = runs[k]
        if (run !== undefined) {
          // One character: its next occurrence from a table (built once per name and character);
          // longer text: indexOf. `*a*b*a*…` globs are long chains of the first kind.
          let at: number
          if (run.length === 1) at = this.nextOf(op)[from]!
          else {
            at = name.indexOf(run, from)
            steps += (n - from) >>> 5
          }
          if (at < 0) break
          from = at + run.length
          k += run.length // and the `*` after it: still every position from `from` on
          continue
        }
        if (op === ANY_ONE) {
          if (++from > n) break
          continue
        }
        // A literal that does not end at a `*`: back to bits, [from, n].
        for (let w = 0; w < words; w++) s[w] = w < from >>> 5 ? 0 : -1
        s[from >>> 5] = -1 << (from & 31)
        s[top] = s[top]! & topMask
        interval = false
      }
      steps += words
      if (op === ANY_RUN) {
        // Every position from the first one reached on.
        let w = 0
        while (s[w] === 0) w++
        from = (w << 5) + 31 - Math.clz32(s[w]! & -s[w]!)
        interval = true
        continue
      }
      if (op === ANY_ONE) {
        for (let w = top; w > 0; w--) s[w] = (s[w]! << 1) | (s[w - 1]! >>> 31)
        s[0] = s[0]! << 1
      } else {
        // Positions where the name has this character, each moved one on.
        const { ascii, other } = (occurrences ??= this.occurrencesOf())
        let at = ascii
        let base = op * words
        if (op >= 128) {
          const bits = other.get(op)
          if (bits === undefined) break
          at = bits
          base = 0
        }
        for (let w = top; w > 0; w--) {
          s[w] = ((s[w]! & at[base + w]!) << 1) | ((s[w - 1]! & at[base + w - 1]!) >>> 31)
        }
        s[0] = (s[0]! & at[base]!) << 1
      }
      s[top] = s[top]! & topMask
      let any = 0
      for (let w = 0; w < words; w++) any |= s[w]!
      if (any === 0) break
    }
    this.steps += steps
    if (k < length) return false
    const end = n - suffix.length
    if (end < start) return false
    return interval ? from <= end : (s[end >>> 5]! & (1 << (end & 31))) !== 0
  }
}
