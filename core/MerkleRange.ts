/**
 * Index arithmetic for RFC 6962 trees: which stored perfect subtrees a root or a proof is made of.
 *
 * Node (level, index) is the perfect subtree over leaves [index·2^level, (index+1)·2^level). In a tree
 * of size n every RFC node on the right edge that is not perfect covers [k·2^level, n), so it is the
 * right fold of the perfect subtrees that decompose that range (`edgeNodes`). That is why a store only
 * ever has to keep perfect nodes, which never change once written.
 *
 * Sizes go up to 2^53 − 1: JavaScript's bitwise operators truncate to 32 bits, so shifts here are
 * divisions by powers of two (exact for safe integers) instead of `>>`.
 */

export interface NodeId {
  readonly level: number
  readonly index: number
}

/** A non-negative safe integer: the only thing a leaf index or a tree size can be. */
export const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

const TWO_32 = 2 ** 32

/** Bits needed to write `value` (0 for 0), for safe integers beyond 32 bits. */
export const bitLength = (value: number): number => {
  const high = Math.floor(value / TWO_32)
  return high > 0 ? 64 - Math.clz32(high) : 32 - Math.clz32(value >>> 0)
}

/** Trailing zero bits of a positive safe integer. */
export const trailingZeros = (value: number): number => {
  let zeros = 0
  while (value % 2 === 0) {
    value /= 2
    zeros++
  }
  return zeros
}

/**
 * The perfect subtrees covering [start, end), largest first. Requires `start` to be a multiple of the
 * largest power of two ≤ end − start (true for [0, n) and for every right-edge RFC node), so each piece
 * is a stored node rather than an arbitrary range.
 */
export const edgeNodes = (start: number, end: number): Array<NodeId> => {
  const nodes: Array<NodeId> = []
  let position = start
  let level = bitLength(end - start) - 1
  for (let width = 2 ** level; level >= 0; level--, width /= 2) {
    if (end - position >= width) {
      nodes.push({ level, index: position / width })
      position += width
    }
  }
  return nodes
}

/**
 * The audit path of perfect node (level, index) in the tree of `size` leaves, bottom-up as RFC 9162
 * sends it. Each element is a group of perfect nodes whose right fold is the proof hash: one node for a
 * perfect sibling, several for the sibling on the right edge that the tree of `size` has not completed.
 * Levels where the path node has no sibling (it is promoted unchanged) contribute nothing.
 */
export const pathGroups = (index: number, level: number, size: number): Array<Array<NodeId>> => {
  const groups: Array<Array<NodeId>> = []
  let width = 2 ** level
  let last = Math.floor((size - 1) / width) // the right-edge node on this level
  while (last > 0) {
    if (index % 2 === 1) {
      groups.push([{ level, index: index - 1 }]) // a left sibling is always perfect
    } else if (index < last) {
      const start = (index + 1) * width
      // A right sibling is perfect unless it is the one node the tree of `size` has not completed.
      groups.push(start + width <= size ? [{ level, index: index + 1 }] : edgeNodes(start, size))
    }
    index = Math.floor(index / 2)
    last = Math.floor(last / 2)
    level++
    width *= 2
  }
  return groups
}

/** Inclusion proof of leaf `leafIndex` in the tree of `treeSize` leaves (requires leafIndex < treeSize). */
export const inclusionGroups = (leafIndex: number, treeSize: number): Array<Array<NodeId>> =>
  pathGroups(leafIndex, 0, treeSize)

/**
 * Consistency proof from size1 to size2 (requires 0 < size1 ≤ size2), RFC 9162 §2.1.4.1 in node terms:
 * the largest perfect subtree ending at size1, then its audit path in the tree of size2. The subtree
 * itself is left out when it is the whole old tree (size1 a power of two): the verifier holds it as root1.
 */
export const consistencyGroups = (size1: number, size2: number): Array<Array<NodeId>> => {
  if (size1 === size2) return []
  const level = trailingZeros(size1)
  const index = size1 / 2 ** level - 1
  const path = pathGroups(index, level, size2)
  return index === 0 ? path : [[{ level, index }], ...path]
}
