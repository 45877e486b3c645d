/**
 * The per-agent transparency log: RFC 6962 / RFC 9162 Merkle tree hashing, proofs and verifiers.
 *
 * Pure computation. Storage is anyone's: a log is a set of perfect nodes (`MerkleNode`), written once
 * and never changed, plus a compact frontier for O(log n) appends. Roots and proofs for any size up to
 * the current one (older tree heads included) are folded from those perfect nodes, read through a
 * `NodeReader`, so a database store can fetch the nodes a proof needs (`*ProofNodes`) in one query and
 * hand them back here. Proof hashes are in RFC 9162 order (bottom-up), as in the transparency-dev
 * vectors. Verifiers follow RFC 9162 §2.1.3.2 and §2.1.4.2 and answer `false`, never throw.
 */
import { bytesEqual, concatBytes } from "./Bytes.js"
import { sha256 } from "./Hash.js"
import { consistencyGroups, edgeNodes, inclusionGroups, isCount, type NodeId } from "./MerkleRange.js"

export const HASH_SIZE = 32

const LEAF_PREFIX = Uint8Array.of(0x00)

/** SHA-256(0x00 ‖ data): the hash of one log entry. */
export const leafHash = (data: Uint8Array): Uint8Array => sha256(concatBytes(LEAF_PREFIX, data))

/**
 * One reusable `0x01 ‖ left ‖ right` buffer: interior hashing is the hot loop of appends, proofs and
 * verifiers, and filling a preallocated buffer beats allocating 65 bytes per hash. Safe because
 * hashing is synchronous and `sha256` returns fresh memory.
 */
const CHILDREN = new Uint8Array(1 + 2 * HASH_SIZE)
CHILDREN[0] = 0x01

/** Interior hash without length checks, for callers that already know both sides are 32 bytes. */
const hashChildren = (left: Uint8Array, right: Uint8Array): Uint8Array => {
  CHILDREN.set(left, 1)
  CHILDREN.set(right, 1 + HASH_SIZE)
  return sha256(CHILDREN)
}

const isHash = (value: unknown): value is Uint8Array => value instanceof Uint8Array && value.length === HASH_SIZE

/** SHA-256(0x01 ‖ left ‖ right). Both sides must be 32-byte hashes; anything else is a bug, so it throws. */
export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => {
  if (!isHash(left) || !isHash(right)) throw new RangeError("nodeHash: both children must be 32-byte hashes")
  return hashChildren(left, right)
}

/** The root of the empty tree, SHA-256(""). Treat as read-only; functions here hand out copies. */
export const emptyRoot: Uint8Array = sha256(new Uint8Array(0))

/** The perfect subtree covering leaves [index·2^level, (index+1)·2^level); level 0 holds the leaf hashes. */
export interface MerkleNode {
  readonly level: number
  readonly index: number
  readonly hash: Uint8Array
}

/** Compact range [0, size): roots of the perfect subtrees, largest (leftmost) first; one per set bit of size. */
export interface Frontier {
  readonly size: number
  readonly hashes: ReadonlyArray<Uint8Array>
}

export const emptyFrontier: Frontier = Object.freeze({ size: 0, hashes: Object.freeze([]) })

/** Reads a stored perfect node; `undefined` when the store does not have it. */
export type NodeReader = (level: number, index: number) => Uint8Array | undefined

const popCount = (value: number): number => {
  let count = 0
  for (; value > 0; value = Math.floor(value / 2)) count += value % 2
  return count
}

const assertFrontier = (frontier: Frontier): void => {
  if (!isCount(frontier.size) || frontier.hashes.length !== popCount(frontier.size) || !frontier.hashes.every(isHash)) {
    throw new RangeError("malformed frontier: it needs one 32-byte hash per set bit of its size")
  }
}

/** Right fold: how RFC 6962 combines the perfect subtrees of a range into one (possibly imperfect) subtree. */
const foldRight = (hashes: ReadonlyArray<Uint8Array>): Uint8Array => {
  let acc: Uint8Array = hashes[hashes.length - 1]!.slice() // a one-subtree root must not alias the frontier
  for (let i = hashes.length - 2; i >= 0; i--) acc = hashChildren(hashes[i]!, acc)
  return acc
}

/**
 * Adds one leaf hash. The new leaf completes one perfect subtree per trailing one bit of the old size
 * (about one hash per append on average); every completed node is returned so a store can persist it.
 */
export const appendToFrontier = (
  frontier: Frontier,
  leafHash: Uint8Array
): { readonly frontier: Frontier; readonly nodes: ReadonlyArray<MerkleNode> } => {
  assertFrontier(frontier)
  if (!isHash(leafHash)) throw new RangeError("appendToFrontier: the leaf hash must be 32 bytes")
  if (frontier.size >= Number.MAX_SAFE_INTEGER) throw new RangeError("appendToFrontier: the log is full")
  const hashes = frontier.hashes.slice()
  let hash: Uint8Array = leafHash.slice() // the caller may reuse its buffer
  let index = frontier.size
  let level = 0
  const nodes: Array<MerkleNode> = [{ level, index, hash }]
  while (index % 2 === 1) {
    hash = hashChildren(hashes.pop()!, hash)
    index = (index - 1) / 2
    level++
    nodes.push({ level, index, hash })
  }
  hashes.push(hash)
  return { frontier: { size: frontier.size + 1, hashes }, nodes }
}

/** The tree head of a frontier, without reading any store. */
export const frontierRoot = (frontier: Frontier): Uint8Array => {
  assertFrontier(frontier)
  return frontier.size === 0 ? emptyRoot.slice() : foldRight(frontier.hashes)
}

/**
 * The inclusion proof of the leaf that `before` was extended by, in the tree of size `before.size + 1`:
 * RFC 6962's PATH for the last leaf is the compact range to its left, smallest subtree first, so the
 * attestation path gets its proof without hashing or reading a store.
 */
export const newestLeafProof = (before: Frontier): ReadonlyArray<Uint8Array> => {
  assertFrontier(before)
  return before.hashes.map((hash) => hash.slice()).reverse()
}

/** Reads the given nodes and folds them; `undefined` if any is missing (or is not a 32-byte hash). */
const readFold = (nodes: ReadonlyArray<NodeId>, read: NodeReader): Uint8Array | undefined => {
  let acc: Uint8Array | undefined
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!
    const hash = read(node.level, node.index)
    if (!isHash(hash)) return undefined
    acc = acc === undefined ? hash : hashChildren(hash, acc)
  }
  return acc
}

const readGroups = (
  groups: ReadonlyArray<ReadonlyArray<NodeId>>,
  read: NodeReader
): ReadonlyArray<Uint8Array> | undefined => {
  const proof: Array<Uint8Array> = []
  for (const group of groups) {
    const hash = readFold(group, read)
    if (hash === undefined) return undefined
    proof.push(hash)
  }
  return proof
}

/** MTH of the first `treeSize` leaves, from the perfect nodes of that size; `undefined` if one is missing. */
export const rootAt = (treeSize: number, read: NodeReader): Uint8Array | undefined => {
  if (!isCount(treeSize)) throw new RangeError(`rootAt: tree size ${treeSize} is not a non-negative safe integer`)
  return treeSize === 0 ? emptyRoot.slice() : readFold(edgeNodes(0, treeSize), read)
}

/** The perfect nodes {@link rootAt} reads, so a database can fetch them in one query. */
export const rootNodes = (treeSize: number): ReadonlyArray<{ level: number; index: number }> => {
  if (!isCount(treeSize)) throw new RangeError(`rootNodes: tree size ${treeSize} is not a non-negative safe integer`)
  return treeSize === 0 ? [] : edgeNodes(0, treeSize)
}

const checkedInclusionGroups = (leafIndex: number, treeSize: number): Array<Array<NodeId>> => {
  if (!isCount(leafIndex) || !isCount(treeSize) || leafIndex >= treeSize) {
    throw new RangeError(`inclusion proof: need 0 ≤ leafIndex < treeSize, got ${leafIndex} and ${treeSize}`)
  }
  return inclusionGroups(leafIndex, treeSize)
}

/**
 * Matches the transparency-dev generator: a proof from the empty tree is refused (there is nothing to
 * prove, and the verifier rejects it), and equal sizes give the empty proof.
 */
const checkedConsistencyGroups = (size1: number, size2: number): Array<Array<NodeId>> => {
  if (!isCount(size1) || !isCount(size2) || size1 > size2 || (size1 === 0 && size2 > 0)) {
    throw new RangeError(`consistency proof: need 0 < size1 ≤ size2 (or both 0), got ${size1} and ${size2}`)
  }
  return consistencyGroups(size1, size2)
}

/** `Array.prototype.flat` is several times slower than this loop in V8, and proofs are a hot path. */
const flatten = (groups: ReadonlyArray<ReadonlyArray<NodeId>>): Array<NodeId> => {
  const nodes: Array<NodeId> = []
  for (const group of groups) for (const node of group) nodes.push(node)
  return nodes
}

/** The perfect nodes an inclusion proof is built from, so a database can fetch them in one query. */
export const inclusionProofNodes = (
  leafIndex: number,
  treeSize: number
): ReadonlyArray<{ level: number; index: number }> => flatten(checkedInclusionGroups(leafIndex, treeSize))

/** RFC 9162 inclusion proof (bottom-up); `undefined` if a needed node is missing. Throws RangeError on bad arguments. */
export const inclusionProof = (
  leafIndex: number,
  treeSize: number,
  read: NodeReader
): ReadonlyArray<Uint8Array> | undefined => readGroups(checkedInclusionGroups(leafIndex, treeSize), read)

/** The perfect nodes a consistency proof is built from. */
export const consistencyProofNodes = (size1: number, size2: number): ReadonlyArray<{ level: number; index: number }> =>
  flatten(checkedConsistencyGroups(size1, size2))

/** RFC 9162 consistency proof; `undefined` if a needed node is missing. Throws RangeError on bad arguments. */
export const consistencyProof = (
  size1: number,
  size2: number,
  read: NodeReader
): ReadonlyArray<Uint8Array> | undefined => readGroups(checkedConsistencyGroups(size1, size2), read)

/** One right shift of fn and sn per RFC 9162; plain division because sizes may exceed 32 bits. */
const half = (value: number): number => Math.floor(value / 2)

/**
 * RFC 9162 §2.1.3.2. leaf_index and tree_size fix the proof's length and the side of every sibling: a
 * proof of the wrong length runs sn to zero too early or too late, and the loop stops after at most ~53
 * elements however long the proof is. Sizes with the same shape (6 of 13 and 6 of 14) accept the same
 * proof, so the caller must take tree_size from the signed checkpoint that carries `root`.
 */
export const verifyInclusion = (input: {
  readonly leafIndex: number
  readonly treeSize: number
  readonly leafHash: Uint8Array
  readonly proof: ReadonlyArray<Uint8Array>
  readonly root: Uint8Array
}): boolean => {
  if (typeof input !== "object" || input === null) return false
  const { leafIndex, treeSize, leafHash: leaf, proof, root } = input
  if (!isCount(leafIndex) || !isCount(treeSize) || leafIndex >= treeSize) return false
  if (!isHash(leaf) || !isHash(root) || !Array.isArray(proof)) return false
  let fn = leafIndex
  let sn = treeSize - 1
  let r = leaf
  for (const p of proof as ReadonlyArray<unknown>) {
    if (sn === 0 || !isHash(p)) return false
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r)
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2
        sn = half(sn)
      }
    } else {
      r = hashChildren(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && bytesEqual(r, root)
}

/**
 * RFC 9162 §2.1.4.2, with the cases it leaves out decided as transparency-dev's Go verifier does
 * (that is what the vectors encode): equal sizes need an empty proof and equal roots; a proof from
 * size 0 to a larger size is rejected as meaningless, whatever root1 is.
 */
export const verifyConsistency = (input: {
  readonly size1: number
  readonly size2: number
  readonly proof: ReadonlyArray<Uint8Array>
  readonly root1: Uint8Array
  readonly root2: Uint8Array
}): boolean => {
  if (typeof input !== "object" || input === null) return false
  const { size1, size2, proof, root1, root2 } = input
  if (!isCount(size1) || !isCount(size2) || size1 > size2) return false
  if (!isHash(root1) || !isHash(root2) || !Array.isArray(proof)) return false
  if (size1 === size2) return proof.length === 0 && bytesEqual(root1, root2)
  if (size1 === 0 || proof.length === 0) return false
  const items = proof as ReadonlyArray<unknown>
  let fn = size1 - 1
  let sn = size2 - 1
  while (fn % 2 === 1) {
    fn = half(fn)
    sn = half(sn)
  }
  // fn = 0 here exactly when size1 is a power of two: then the seed is root1 itself, not proof[0].
  const seeded = fn === 0
  const seed = seeded ? root1 : items[0]
  if (!isHash(seed)) return false
  let fr = seed
  let sr = seed
  for (let k = seeded ? 0 : 1; k < items.length; k++) {
    const c = items[k]
    if (sn === 0 || !isHash(c)) return false
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr)
      sr = hashChildren(c, sr)
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2
        sn = half(sn)
      }
    } else {
      sr = hashChildren(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && bytesEqual(fr, root1) && bytesEqual(sr, root2)
}

/** Nodes per level before the first growth: small, because one log is kept per agent. */
const INITIAL_CAPACITY = 16

/**
 * An in-memory log. Each level's perfect nodes live in one growable flat buffer (32 bytes per node,
 * capacity doubling), so a million leaves are about 64 MB in ~20 allocations rather than millions of
 * small arrays, and the frontier is implicit: the nodes it needs are already stored.
 */
export class MemoryMerkleLog {
  #size = 0
  readonly #levels: Array<Uint8Array> = []
  /**
   * Right folds of the current frontier, keyed by the level of their first node. Every imperfect node
   * of the current tree (the root included) is one of them, so once computed, proofs and the root at
   * the current size cost no hashing; an append makes them stale.
   */
  #edgeFolds: Map<number, Uint8Array> | undefined

  get size(): number {
    return this.#size
  }

  /** Appends a leaf hash (computed by the caller, see `leafHash`) and returns its index. */
  append(leafHash: Uint8Array): number {
    if (!isHash(leafHash)) throw new RangeError("MemoryMerkleLog.append: the leaf hash must be 32 bytes")
    const leafIndex = this.#size
    if (leafIndex >= Number.MAX_SAFE_INTEGER) throw new RangeError("MemoryMerkleLog.append: the log is full")
    this.#store(0, leafIndex, leafHash)
    let hash = leafHash
    let index = leafIndex
    let level = 0
    while (index % 2 === 1) {
      // The left sibling is hashed straight from the flat buffer, without copying it out first.
      const offset = (index - 1) * HASH_SIZE
      CHILDREN.set(this.#levels[level]!.subarray(offset, offset + HASH_SIZE), 1)
      CHILDREN.set(hash, 1 + HASH_SIZE)
      hash = sha256(CHILDREN)
      index = (index - 1) / 2
      level++
      this.#store(level, index, hash)
    }
    this.#size = leafIndex + 1
    this.#edgeFolds = undefined
    return leafIndex
  }

  #store(level: number, index: number, hash: Uint8Array): void {
    let buffer = this.#levels[level] ?? new Uint8Array(INITIAL_CAPACITY * HASH_SIZE)
    const end = (index + 1) * HASH_SIZE
    if (end > buffer.length) {
      let length = buffer.length * 2
      while (length < end) length *= 2
      const grown = new Uint8Array(length)
      grown.set(buffer)
      buffer = grown
    }
    this.#levels[level] = buffer
    buffer.set(hash, index * HASH_SIZE)
  }

  /** A copy of a stored perfect node, or `undefined` if it is not complete at the current size. */
  readonly node: NodeReader = (level, index) => {
    if (!isCount(level) || !isCount(index) || level > 53) return undefined
    if (index >= Math.floor(this.#size / 2 ** level)) return undefined
    const offset = index * HASH_SIZE
    return this.#levels[level]!.slice(offset, offset + HASH_SIZE)
  }

  get frontier(): Frontier {
    const hashes: Array<Uint8Array> = []
    for (const { level, index } of edgeNodes(0, this.#size)) hashes.push(this.node(level, index)!)
    return { size: this.#size, hashes }
  }

  #folds(): Map<number, Uint8Array> {
    if (this.#edgeFolds === undefined) {
      const folds = new Map<number, Uint8Array>()
      const nodes = edgeNodes(0, this.#size)
      let acc: Uint8Array | undefined
      for (let i = nodes.length - 1; i >= 0; i--) {
        const { level, index } = nodes[i]!
        const hash = this.node(level, index)!
        acc = acc === undefined ? hash : hashChildren(hash, acc)
        folds.set(level, acc)
      }
      this.#edgeFolds = folds
    }
    return this.#edgeFolds
  }

  /**
   * Proof hashes for groups of perfect nodes. At the current size a multi-node group is a suffix of the
   * frontier (it covers [start, size)), so it comes from the fold cache; older sizes fold as usual.
   */
  #read(groups: ReadonlyArray<ReadonlyArray<NodeId>>, treeSize: number): ReadonlyArray<Uint8Array> {
    const current = treeSize === this.#size
    const proof: Array<Uint8Array> = []
    for (const group of groups) {
      const first = group[0]!
      const hash =
        group.length === 1
          ? this.node(first.level, first.index)
          : current
            ? this.#folds().get(first.level)?.slice()
            : readFold(group, this.node)
      // A broken invariant of this synchronous class, not a failure a caller could handle: a defect.
      if (hash === undefined) throw new Error("MemoryMerkleLog: a node that must exist is missing")
      proof.push(hash)
    }
    return proof
  }

  #checkSize(size: number, what: string): void {
    if (!isCount(size) || size > this.#size) {
      throw new RangeError(`MemoryMerkleLog: ${what} ${size} is not a size this log has had (0..${this.#size})`)
    }
  }

  /** Root at the current size (cached until the next append), or at any older size. */
  root(size: number = this.#size): Uint8Array {
    this.#checkSize(size, "tree size")
    if (size === 0) return emptyRoot.slice()
    if (size !== this.#size) return rootAt(size, this.node)!
    return this.#folds().get(edgeNodes(0, size)[0]!.level)!.slice()
  }

  /** RFC 9162 inclusion proof against the current size or an older one. */
  inclusionProof(leafIndex: number, treeSize: number = this.#size): ReadonlyArray<Uint8Array> {
    this.#checkSize(treeSize, "tree size")
    return this.#read(checkedInclusionGroups(leafIndex, treeSize), treeSize)
  }

  /** RFC 9162 consistency proof between two sizes this log has had. */
  consistencyProof(size1: number, size2: number = this.#size): ReadonlyArray<Uint8Array> {
    this.#checkSize(size2, "size2")
    return this.#read(checkedConsistencyGroups(size1, size2), size2)
  }
}
