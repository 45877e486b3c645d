/**
 * SHA-256 Merkle trees over the prover's commitments, with batch openings: the proof for a set of
 * leaves holds only the sibling hashes the verifier cannot compute from the opened leaves, level by
 * level, left to right. Leaves and nodes are domain-separated as in RFC 6962:
 * leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right).
 */
import { bytesEqual, concatBytes } from "../../core/Bytes.js"
import { sha256 } from "../../core/Hash.js"

const LEAF = Uint8Array.of(0)
const NODE = Uint8Array.of(1)

export const leafHash = (data: Uint8Array): Uint8Array => sha256(concatBytes(LEAF, data))
const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => sha256(concatBytes(NODE, left, right))

interface Known {
  readonly index: number
  readonly hash: Uint8Array
}

/**
 * One pass up the tree from the known nodes of the bottom level; `sibling(level, index)` supplies a
 * hash that is not known. Returns the root. Shared by the prover (siblings from the tree) and the
 * verifier (siblings from the proof), so both walk the same order.
 */
const climb = (
  leafCount: number,
  known: ReadonlyArray<Known>,
  sibling: (level: number, index: number) => Uint8Array
): Uint8Array => {
  let nodes = known
  let size = leafCount
  let level = 0
  while (size > 1) {
    const parents: Array<Known> = []
    for (let j = 0; j < nodes.length; j++) {
      const { index, hash } = nodes[j]!
      const next = nodes[j + 1]
      if ((index & 1) === 0 && next !== undefined && next.index === index + 1) {
        parents.push({ index: index >> 1, hash: nodeHash(hash, next.hash) })
        j++
      } else {
        const other = sibling(level, index ^ 1)
        parents.push({ index: index >> 1, hash: (index & 1) === 0 ? nodeHash(hash, other) : nodeHash(other, hash) })
      }
    }
    nodes = parents
    size >>= 1
    level++
  }
  return nodes[0]!.hash
}

const checkIndices = (indices: ReadonlyArray<number>, leafCount: number): void => {
  indices.forEach((index, j) => {
    if (!Number.isInteger(index) || index < 0 || index >= leafCount || (j > 0 && index <= indices[j - 1]!)) {
      throw new RangeError("leaf indices must be distinct, ascending and inside the tree")
    }
  })
}

export class MerkleTree {
  /** levels[0] are the leaf hashes; the last level is the root. */
  private readonly levels: Array<Array<Uint8Array>>

  constructor(leaves: ReadonlyArray<Uint8Array>) {
    const count = leaves.length
    if (count === 0 || (count & (count - 1)) !== 0) throw new RangeError(`leaf count ${count} is not a power of two`)
    let level = leaves.map(leafHash)
    this.levels = [level]
    while (level.length > 1) {
      const up: Array<Uint8Array> = []
      for (let i = 0; i < level.length; i += 2) up.push(nodeHash(level[i]!, level[i + 1]!))
      this.levels.push(up)
      level = up
    }
  }

  get root(): Uint8Array {
    return this.levels[this.levels.length - 1]![0]!
  }

  get leafCount(): number {
    return this.levels[0]!.length
  }

  /** The sibling hashes that open these leaves (distinct, ascending). */
  open(indices: ReadonlyArray<number>): Array<Uint8Array> {
    checkIndices(indices, this.leafCount)
    const proof: Array<Uint8Array> = []
    const known = indices.map((index) => ({ index, hash: this.levels[0]![index]! }))
    climb(this.leafCount, known, (level, index) => {
      const hash = this.levels[level]![index]!
      proof.push(hash)
      return hash
    })
    return proof
  }
}

/**
 * Whether the leaves with these data open to `root`; `nextHash` reads the proof's sibling hashes in
 * order (and may throw when the proof runs out). The caller checks that nothing is left over.
 */
export const verifyOpening = (
  root: Uint8Array,
  leafCount: number,
  indices: ReadonlyArray<number>,
  leaves: ReadonlyArray<Uint8Array>,
  nextHash: () => Uint8Array
): boolean => {
  checkIndices(indices, leafCount)
  if (leaves.length !== indices.length) return false
  const known = indices.map((index, j) => ({ index, hash: leafHash(leaves[j]!) }))
  return bytesEqual(
    climb(leafCount, known, () => nextHash()),
    root
  )
}
