import { describe, expect, it } from "@effect/vitest"
import { MerkleTree } from "merkletreejs"
import { createHash } from "node:crypto"
import { fromBase64, fromHex, toHex } from "../../core/Bytes.js"
import {
  appendToFrontier,
  consistencyProof,
  consistencyProofNodes,
  emptyFrontier,
  emptyRoot,
  type Frontier,
  frontierRoot,
  HASH_SIZE,
  inclusionProof,
  inclusionProofNodes,
  leafHash,
  MemoryMerkleLog,
  type NodeReader,
  nodeHash,
  rootAt,
  verifyConsistency,
  verifyInclusion
} from "../../core/Merkle.js"
import { walkVectorJson } from "../Vectors.js"

// ---------------------------------------------------------------------------------------------
// Reference: RFC 6962 §2.1 written out recursively, with its own SHA-256, sharing no code with
// core/Merkle.ts. It works on leaf hashes, so MTH of one entry is that entry's leaf hash.
// ---------------------------------------------------------------------------------------------

const sha = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const h = createHash("sha256")
  for (const part of parts) h.update(part)
  return new Uint8Array(h.digest())
}
const refLeaf = (data: Uint8Array): Uint8Array => sha(Uint8Array.of(0), data)
const refNode = (l: Uint8Array, r: Uint8Array): Uint8Array => sha(Uint8Array.of(1), l, r)
const splitPoint = (n: number): number => {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}
const mth = (d: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (d.length === 0) return sha()
  if (d.length === 1) return d[0]!
  const k = splitPoint(d.length)
  return refNode(mth(d.slice(0, k)), mth(d.slice(k)))
}
const refPath = (m: number, d: ReadonlyArray<Uint8Array>): Array<Uint8Array> => {
  if (d.length <= 1) return []
  const k = splitPoint(d.length)
  return m < k ? [...refPath(m, d.slice(0, k)), mth(d.slice(k))] : [...refPath(m - k, d.slice(k)), mth(d.slice(0, k))]
}
const refSubproof = (m: number, d: ReadonlyArray<Uint8Array>, b: boolean): Array<Uint8Array> => {
  if (m === d.length) return b ? [] : [mth(d)]
  const k = splitPoint(d.length)
  return m <= k
    ? [...refSubproof(m, d.slice(0, k), b), mth(d.slice(k))]
    : [...refSubproof(m - k, d.slice(k), false), mth(d.slice(0, k))]
}
const refProof = (m: number, d: ReadonlyArray<Uint8Array>): Array<Uint8Array> => refSubproof(m, d, true)

/**
 * The shape of PATH / PROOF: for each element, whether it is a left (L) or right (R) sibling, and (S)
 * whether the old root is sent. A verifier only ever sees leaf_index and tree_size through this shape,
 * so two parameter pairs with the same shape accept the same (proof, root): RFC 9162 binds the sizes up
 * to shape, and the signed checkpoint is what binds the exact size to the root.
 */
const isPair = (m: number, n: number): boolean => Number.isSafeInteger(m) && Number.isSafeInteger(n) && m >= 0 && m < n
const pathShape = (m: number, n: number): string => {
  if (n <= 1) return ""
  const k = splitPoint(n)
  return m < k ? `${pathShape(m, k)}R` : `${pathShape(m - k, n - k)}L`
}
const subproofShape = (m: number, n: number, b: boolean): string => {
  if (m === n) return b ? "" : "S"
  const k = splitPoint(n)
  return m <= k ? `${subproofShape(m, k, b)}R` : `${subproofShape(m - k, n - k, false)}L`
}
const inclusionShape = (m: number, n: number): string | undefined => (isPair(m, n) ? pathShape(m, n) : undefined)
const consistencyShape = (m: number, n: number): string | undefined =>
  m > 0 && isPair(m - 1, n) ? subproofShape(m, n, true) : undefined

const hexes = (hashes: ReadonlyArray<Uint8Array> | undefined): Array<string> | undefined => hashes?.map(toHex)

/** Distinct, deterministic leaf hashes. */
const makeLeaves = (n: number): Array<Uint8Array> =>
  Array.from({ length: n }, (_, i) => refLeaf(Uint8Array.of(i & 0xff, (i >> 8) & 0xff, 0x5a)))

/** A store fed only by appendToFrontier's `nodes`, read through a NodeReader that records its reads. */
const frontierStore = (leaves: ReadonlyArray<Uint8Array>) => {
  const nodes = new Map<string, Uint8Array>()
  const frontiers: Array<Frontier> = [emptyFrontier]
  let frontier = emptyFrontier
  for (const leaf of leaves) {
    const step = appendToFrontier(frontier, leaf)
    for (const node of step.nodes) {
      const key = `${node.level}:${node.index}`
      expect(nodes.has(key), `node ${key} completed twice`).toBe(false)
      nodes.set(key, node.hash)
    }
    frontier = step.frontier
    frontiers.push(frontier)
  }
  const reads: Array<string> = []
  const read: NodeReader = (level, index) => {
    reads.push(`${level}:${index}`)
    return nodes.get(`${level}:${index}`)
  }
  return { nodes, frontiers, read, reads }
}

const popCount = (n: number): number => n.toString(2).replaceAll("0", "").length

// ---------------------------------------------------------------------------------------------
// 1. The transparency-dev vectors
// ---------------------------------------------------------------------------------------------

interface InclusionVector {
  readonly leafIdx: number
  readonly treeSize: number
  readonly root: string | null
  readonly leafHash: string | null
  readonly proof: ReadonlyArray<string> | null
  readonly desc: string
  readonly wantErr: boolean
}
interface ConsistencyVector {
  readonly size1: number
  readonly size2: number
  readonly root1: string | null
  readonly root2: string | null
  readonly proof: ReadonlyArray<string> | null
  readonly desc: string
  readonly wantErr: boolean
}

/** Vector fields are base64; null and "" both mean "no bytes". A malformed field is a broken vector file. */
const b64 = (text: string | null | undefined): Uint8Array => {
  if (text === null || text === undefined) return new Uint8Array(0)
  const bytes = fromBase64(text)
  if (bytes === undefined) throw new Error(`vector field is not base64: ${text}`)
  return bytes
}
const b64List = (list: ReadonlyArray<string> | null): Array<Uint8Array> => (list ?? []).map(b64)

const inclusionVectors = walkVectorJson<InclusionVector>("merkle", "inclusion")
const consistencyVectors = walkVectorJson<ConsistencyVector>("merkle", "consistency")

/** The RFC 6962 test inputs (certificate-transparency, transparency-dev testonly/constants.go). */
const rfcInputs = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]
const rfcLeaves = rfcInputs.map((hex) => leafHash(fromHex(hex)!))

describe("transparency-dev vectors", () => {
  it("are all there", () => {
    // Counted so that an empty or partial walk fails instead of passing vacuously.
    expect(inclusionVectors.length).toBe(83)
    expect(consistencyVectors.length).toBe(43)
    expect(inclusionVectors.filter(([, v]) => !v.wantErr).length).toBe(5)
    expect(consistencyVectors.filter(([, v]) => !v.wantErr).length).toBe(3)
  })

  it("inclusion: every case verifies exactly when wantErr is false", () => {
    let checked = 0
    for (const [name, v] of inclusionVectors) {
      const got = verifyInclusion({
        leafIndex: v.leafIdx,
        treeSize: v.treeSize,
        leafHash: b64(v.leafHash),
        proof: b64List(v.proof),
        root: b64(v.root)
      })
      expect(got, `${name}: ${v.desc}`).toBe(!v.wantErr)
      checked++
    }
    expect(checked).toBe(83)
  })

  it("consistency: every case verifies exactly when wantErr is false", () => {
    let checked = 0
    for (const [name, v] of consistencyVectors) {
      const got = verifyConsistency({
        size1: v.size1,
        size2: v.size2,
        proof: b64List(v.proof),
        root1: b64(v.root1),
        root2: b64(v.root2)
      })
      expect(got, `${name}: ${v.desc}`).toBe(!v.wantErr)
      checked++
    }
    expect(checked).toBe(43)
  })

  it("happy paths over the RFC 6962 inputs are exactly the proofs we generate", () => {
    const log = new MemoryMerkleLog()
    for (const leaf of rfcLeaves) log.append(leaf)
    let matched = 0
    for (const [name, v] of inclusionVectors) {
      if (v.wantErr || v.treeSize > log.size || toHex(b64(v.root)) !== toHex(log.root(v.treeSize))) continue
      expect(hexes(log.inclusionProof(v.leafIdx, v.treeSize)), name).toEqual(hexes(b64List(v.proof)))
      matched++
    }
    for (const [name, v] of consistencyVectors) {
      if (v.wantErr || v.size2 > log.size || toHex(b64(v.root2)) !== toHex(log.root(v.size2))) continue
      expect(toHex(log.root(v.size1)), name).toBe(toHex(b64(v.root1)))
      expect(hexes(log.consistencyProof(v.size1, v.size2)), name).toEqual(hexes(b64List(v.proof)))
      matched++
    }
    expect(matched).toBeGreaterThanOrEqual(6)
  })
})

// ---------------------------------------------------------------------------------------------
// 2. merkletreejs as an independent oracle
// ---------------------------------------------------------------------------------------------

describe("merkletreejs 0.6.0 oracle", () => {
  it("has the same roots and inclusion proofs for n = 1..130 and every index", () => {
    const shaBuf = (data: Buffer): Buffer => createHash("sha256").update(data).digest()
    const leaves = makeLeaves(130)
    const log = new MemoryMerkleLog()
    for (const leaf of leaves) log.append(leaf)
    let proofs = 0
    for (let n = 1; n <= 130; n++) {
      const tree = new MerkleTree(
        leaves.slice(0, n).map((leaf) => Buffer.from(leaf)),
        shaBuf,
        // Pre-hashed leaves, node = SHA-256(0x01 ‖ l ‖ r); hashLeaves must stay false.
        { hashLeaves: false, concatenator: (bufs: Array<Buffer>) => Buffer.concat([Buffer.from([1]), ...bufs]) }
      )
      expect(log.root(n).length).toBe(HASH_SIZE)
      expect(toHex(log.root(n)), `root ${n}`).toBe(tree.getRoot().toString("hex"))
      for (let i = 0; i < n; i++) {
        const theirs = tree.getProof(Buffer.from(leaves[i]!), i).map((step) => step.data.toString("hex"))
        expect(hexes(log.inclusionProof(i, n)), `proof ${i} of ${n}`).toEqual(theirs)
        proofs++
      }
    }
    expect(proofs).toBe((130 * 131) / 2)
  })
})

// ---------------------------------------------------------------------------------------------
// 3. Against the recursive reference, every size, every pair
// ---------------------------------------------------------------------------------------------

describe("RFC 6962 reference", () => {
  const N = 70
  const leaves = makeLeaves(N)
  const full = new MemoryMerkleLog()
  for (const leaf of leaves) full.append(leaf)
  const store = frontierStore(leaves)

  it("roots: MemoryMerkleLog, rootAt over stored nodes and the frontier alone all equal MTH", () => {
    expect(toHex(full.root(0))).toBe(toHex(emptyRoot))
    expect(toHex(emptyRoot)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    const growing = new MemoryMerkleLog()
    for (let n = 0; n <= N; n++) {
      if (n > 0) expect(growing.append(leaves[n - 1]!)).toBe(n - 1)
      const want = toHex(mth(leaves.slice(0, n)))
      expect(toHex(full.root(n)), `full.root(${n})`).toBe(want)
      expect(toHex(growing.root()), `growing.root() at ${n}`).toBe(want)
      expect(toHex(rootAt(n, store.read)!), `rootAt(${n})`).toBe(want)
      expect(toHex(frontierRoot(store.frontiers[n]!)), `frontierRoot(${n})`).toBe(want)
      // The log's own frontier is the appendToFrontier one, hash for hash.
      expect(growing.frontier.size).toBe(n)
      expect(hexes(growing.frontier.hashes)).toEqual(hexes(store.frontiers[n]!.hashes))
      expect(store.frontiers[n]!.hashes.length).toBe(popCount(n))
    }
  })

  it("appendToFrontier emits each perfect node once, and they are the log's nodes", () => {
    expect(store.nodes.size).toBe(2 * N - popCount(N))
    for (const [key, hash] of store.nodes) {
      const [level, index] = key.split(":").map(Number) as [number, number]
      expect(toHex(full.node(level, index)!), key).toBe(toHex(hash))
      expect(toHex(hash), key).toBe(toHex(mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level))))
    }
    expect(full.node(0, N)).toBeUndefined()
    expect(full.node(1, N / 2)).toBeUndefined()
    expect(full.node(7, 0)).toBeUndefined()
    expect(full.node(-1, 0)).toBeUndefined()
    expect(full.node(0, 1.5)).toBeUndefined()
  })

  it("inclusion proofs for every (m, n), at the current size and against older sizes, equal PATH(m, D[n])", () => {
    const growing = new MemoryMerkleLog()
    let checked = 0
    for (let n = 1; n <= N; n++) {
      growing.append(leaves[n - 1]!)
      const d = leaves.slice(0, n)
      const root = mth(d)
      for (let m = 0; m < n; m++) {
        const want = hexes(refPath(m, d))
        expect(hexes(full.inclusionProof(m, n)), `older ${m}/${n}`).toEqual(want)
        expect(hexes(growing.inclusionProof(m)), `current ${m}/${n}`).toEqual(want)
        store.reads.length = 0
        const proof = inclusionProof(m, n, store.read)
        expect(hexes(proof), `read ${m}/${n}`).toEqual(want)
        // The node list is exactly what the proof reads, and only nodes complete at size n.
        const nodes = inclusionProofNodes(m, n).map(({ level, index }) => `${level}:${index}`)
        expect([...nodes].sort()).toEqual([...store.reads].sort())
        for (const { level, index } of inclusionProofNodes(m, n)) expect(index).toBeLessThan(Math.floor(n / 2 ** level))
        expect(verifyInclusion({ leafIndex: m, treeSize: n, leafHash: d[m]!, proof: proof!, root })).toBe(true)
        checked++
      }
    }
    expect(checked).toBe((N * (N + 1)) / 2)
  })

  it("consistency proofs for every 0 < m ≤ n, current and older sizes, equal PROOF(m, D[n]) and verify", () => {
    const growing = new MemoryMerkleLog()
    let checked = 0
    for (let n = 1; n <= N; n++) {
      growing.append(leaves[n - 1]!)
      const d = leaves.slice(0, n)
      const root2 = mth(d)
      for (let m = 1; m <= n; m++) {
        const want = hexes(refProof(m, d))
        expect(hexes(full.consistencyProof(m, n)), `older ${m}→${n}`).toEqual(want)
        expect(hexes(growing.consistencyProof(m)), `current ${m}→${n}`).toEqual(want)
        store.reads.length = 0
        const proof = consistencyProof(m, n, store.read)
        expect(hexes(proof), `read ${m}→${n}`).toEqual(want)
        const nodes = consistencyProofNodes(m, n).map(({ level, index }) => `${level}:${index}`)
        expect([...nodes].sort()).toEqual([...store.reads].sort())
        for (const { level, index } of consistencyProofNodes(m, n))
          expect(index).toBeLessThan(Math.floor(n / 2 ** level))
        const root1 = mth(leaves.slice(0, m))
        expect(verifyConsistency({ size1: m, size2: n, proof: proof!, root1, root2 }), `${m}→${n}`).toBe(true)
        checked++
      }
    }
    expect(checked).toBe((N * (N + 1)) / 2)
  })

  it("size 0: the empty root, and a consistency proof from it is refused both ways", () => {
    expect(toHex(new MemoryMerkleLog().root())).toBe(toHex(emptyRoot))
    expect(toHex(frontierRoot(emptyFrontier))).toBe(toHex(emptyRoot))
    expect(toHex(rootAt(0, () => undefined)!)).toBe(toHex(emptyRoot))
    expect(full.consistencyProof(0, 0)).toEqual([])
    expect(verifyConsistency({ size1: 0, size2: 0, proof: [], root1: emptyRoot, root2: emptyRoot })).toBe(true)
    // transparency-dev: "consistency proof from empty tree is meaningless", in the generator and the verifier.
    expect(() => full.consistencyProof(0, 5)).toThrow(RangeError)
    expect(() => consistencyProofNodes(0, 5)).toThrow(RangeError)
    expect(verifyConsistency({ size1: 0, size2: 5, proof: [], root1: emptyRoot, root2: full.root(5) })).toBe(false)
  })

  it("a missing node gives undefined, never a wrong proof", () => {
    const sparse: NodeReader = (level, index) =>
      level === 0 && (index === 3 || index === 4) ? undefined : store.read(level, index)
    expect(inclusionProof(2, 10, sparse)).toBeUndefined()
    expect(consistencyProof(3, 10, sparse)).toBeUndefined()
    expect(rootAt(5, sparse)).toBeUndefined()
    expect(rootAt(4, sparse)).toBeDefined() // only needs node (2, 0)
    const wrongLength: NodeReader = (level, index) => store.read(level, index)?.subarray(1)
    expect(inclusionProof(2, 10, wrongLength)).toBeUndefined()
  })

  it("bad arguments to the generators are RangeErrors", () => {
    for (const [m, n] of [
      [5, 5],
      [-1, 5],
      [0, 0],
      [1.5, 5],
      [Number.NaN, 5],
      [0, Number.POSITIVE_INFINITY]
    ] as const) {
      expect(() => inclusionProofNodes(m, n), `${m}/${n}`).toThrow(RangeError)
      expect(() => inclusionProof(m, n, store.read), `${m}/${n}`).toThrow(RangeError)
    }
    expect(() => consistencyProofNodes(6, 5)).toThrow(RangeError)
    expect(() => full.inclusionProof(0, N + 1)).toThrow(RangeError)
    expect(() => full.root(N + 1)).toThrow(RangeError)
    expect(() => full.consistencyProof(1, N + 1)).toThrow(RangeError)
    expect(() => full.append(new Uint8Array(31))).toThrow(RangeError)
    expect(() => appendToFrontier(emptyFrontier, new Uint8Array(33))).toThrow(RangeError)
    expect(() => appendToFrontier({ size: 3, hashes: [leaves[0]!] }, leaves[1]!)).toThrow(RangeError)
    expect(() => nodeHash(new Uint8Array(32), new Uint8Array(31))).toThrow(RangeError)
    expect(() => rootAt(-1, store.read)).toThrow(RangeError)
  })
})

// ---------------------------------------------------------------------------------------------
// 4. Tampering: every mutation is false, never an exception
// ---------------------------------------------------------------------------------------------

const flip = (bytes: Uint8Array, position: number, bit = 0): Uint8Array => {
  const copy = bytes.slice()
  copy[position] = copy[position]! ^ (1 << bit)
  return copy
}
const BAD_NUMBERS = [Number.NaN, -1, 2 ** 53, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5, -0.5]
const BYTE_POSITIONS = [0, 1, 15, 16, 30, 31]

describe("tampering", () => {
  const leaves = makeLeaves(21)
  const log = new MemoryMerkleLog()
  for (const leaf of leaves) log.append(leaf)

  const inclusionCases = (leafIndex: number, treeSize: number) => {
    const good = {
      leafIndex,
      treeSize,
      leafHash: leaves[leafIndex]!,
      proof: log.inclusionProof(leafIndex, treeSize),
      root: log.root(treeSize)
    }
    const bad: Array<[string, unknown]> = []
    good.proof.forEach((_, i) => {
      for (const at of BYTE_POSITIONS)
        bad.push([
          `proof[${i}] byte ${at}`,
          { ...good, proof: good.proof.map((p, j) => (j === i ? flip(p, at, at % 8) : p)) }
        ])
      bad.push([`proof[${i}] 31 bytes`, { ...good, proof: good.proof.map((p, j) => (j === i ? p.subarray(1) : p)) }])
      bad.push([
        `proof[${i}] 33 bytes`,
        { ...good, proof: good.proof.map((p, j) => (j === i ? Uint8Array.of(...p, 0) : p)) }
      ])
      bad.push([`proof[${i}] removed`, { ...good, proof: good.proof.filter((_, j) => j !== i) }])
      bad.push([`proof[${i}] duplicated`, { ...good, proof: good.proof.flatMap((p, j) => (j === i ? [p, p] : [p])) }])
    })
    for (const at of BYTE_POSITIONS) {
      bad.push([`root byte ${at}`, { ...good, root: flip(good.root, at, 7) }])
      bad.push([`leaf byte ${at}`, { ...good, leafHash: flip(good.leafHash, at, 3) }])
    }
    if (good.proof.length > 0) {
      bad.push(
        ["truncated", { ...good, proof: good.proof.slice(0, -1) }],
        ["first dropped", { ...good, proof: good.proof.slice(1) }],
        ["empty proof", { ...good, proof: [] }],
        ["root is the leaf", { ...good, root: good.leafHash }], // true only for the one-leaf tree
        ["proof of strings", { ...good, proof: good.proof.map(toHex) }]
      )
    }
    bad.push(
      ["leafIndex = treeSize", { ...good, leafIndex: treeSize }],
      ["extended", { ...good, proof: [...good.proof, good.root] }],
      ["extended with zeros", { ...good, proof: [...good.proof, new Uint8Array(32)] }],
      ["preceded by zeros", { ...good, proof: [new Uint8Array(32), ...good.proof] }],
      ["long garbage", { ...good, proof: [...good.proof, ...Array.from({ length: 1000 }, () => good.root)] }],
      ["root 31 bytes", { ...good, root: good.root.subarray(1) }],
      ["root 33 bytes", { ...good, root: Uint8Array.of(...good.root, 0) }],
      ["leaf 31 bytes", { ...good, leafHash: good.leafHash.subarray(0, 31) }],
      ["leaf 33 bytes", { ...good, leafHash: Uint8Array.of(0, ...good.leafHash) }],
      ["proof not an array", { ...good, proof: null }],
      ["root as hex", { ...good, root: toHex(good.root) }],
      ["leafIndex as string", { ...good, leafIndex: String(leafIndex) }],
      ["treeSize as bigint", { ...good, treeSize: BigInt(treeSize) }],
      ["null input", null],
      ["undefined input", undefined]
    )
    for (const n of BAD_NUMBERS) {
      bad.push([`leafIndex ${n}`, { ...good, leafIndex: n }], [`treeSize ${n}`, { ...good, treeSize: n }])
    }
    // Index and size mutations are rejected exactly when they change the proof's shape.
    const moved: Array<[number, number]> = [
      [leafIndex + 1, treeSize],
      [leafIndex - 1, treeSize],
      [leafIndex, treeSize + 1],
      [leafIndex, treeSize - 1],
      [leafIndex, treeSize * 2],
      [leafIndex ^ 2, treeSize],
      [leafIndex, Math.floor(treeSize / 2)]
    ]
    return { good, bad, moved }
  }

  for (const [leafIndex, treeSize] of [
    [6, 13],
    [12, 13],
    [0, 16],
    [15, 16],
    [20, 21],
    [0, 1]
  ] as const) {
    it(`inclusion of ${leafIndex} in ${treeSize}`, () => {
      const { good, bad, moved } = inclusionCases(leafIndex, treeSize)
      expect(verifyInclusion(good)).toBe(true)
      expect(bad.length).toBeGreaterThan(30)
      for (const [desc, input] of bad) {
        expect(verifyInclusion(input as Parameters<typeof verifyInclusion>[0]), desc).toBe(false)
      }
      let rejected = 0
      for (const [m, n] of moved) {
        const sameShape = inclusionShape(m, n) === inclusionShape(leafIndex, treeSize)
        expect(verifyInclusion({ ...good, leafIndex: m, treeSize: n }), `index ${m}, size ${n}`).toBe(sameShape)
        if (!sameShape) rejected++
      }
      expect(rejected).toBeGreaterThanOrEqual(3)
    })
  }

  const consistencyCases = (size1: number, size2: number) => {
    const good = {
      size1,
      size2,
      proof: log.consistencyProof(size1, size2),
      root1: log.root(size1),
      root2: log.root(size2)
    }
    const bad: Array<[string, unknown]> = []
    good.proof.forEach((_, i) => {
      for (const at of BYTE_POSITIONS)
        bad.push([
          `proof[${i}] byte ${at}`,
          { ...good, proof: good.proof.map((p, j) => (j === i ? flip(p, at, 5) : p)) }
        ])
      bad.push([`proof[${i}] 31 bytes`, { ...good, proof: good.proof.map((p, j) => (j === i ? p.subarray(1) : p)) }])
      bad.push([`proof[${i}] removed`, { ...good, proof: good.proof.filter((_, j) => j !== i) }])
    })
    for (const at of BYTE_POSITIONS) {
      bad.push([`root1 byte ${at}`, { ...good, root1: flip(good.root1, at, 1) }])
      bad.push([`root2 byte ${at}`, { ...good, root2: flip(good.root2, at, 6) }])
    }
    bad.push(
      ["size1 0", { ...good, size1: 0 }],
      ["sizes swapped", { ...good, size1: size2, size2: size1 }],
      ["roots swapped", { ...good, root1: good.root2, root2: good.root1 }],
      ["truncated", { ...good, proof: good.proof.slice(0, -1) }],
      ["empty proof", { ...good, proof: [] }],
      ["extended", { ...good, proof: [...good.proof, good.root2] }],
      ["preceded by root1", { ...good, proof: [good.root1, ...good.proof] }],
      ["long garbage", { ...good, proof: [...good.proof, ...Array.from({ length: 1000 }, () => good.root2)] }],
      ["root1 31 bytes", { ...good, root1: good.root1.subarray(1) }],
      ["root2 33 bytes", { ...good, root2: Uint8Array.of(...good.root2, 0) }],
      ["proof not an array", { ...good, proof: "nope" }],
      ["null input", null]
    )
    for (const n of BAD_NUMBERS) bad.push([`size1 ${n}`, { ...good, size1: n }], [`size2 ${n}`, { ...good, size2: n }])
    const moved: Array<[number, number]> = [
      [size1 + 1, size2],
      [size1 - 1, size2],
      [size1, size2 + 1],
      [size1, size2 - 1],
      [size1, size2 * 2],
      [size1 ^ 2, size2],
      [size1, Math.floor(size2 / 2)]
    ]
    return { good, bad, moved }
  }

  for (const [size1, size2] of [
    [5, 13],
    [4, 13],
    [1, 21],
    [7, 8],
    [16, 21],
    [20, 21]
  ] as const) {
    it(`consistency ${size1} → ${size2}`, () => {
      const { good, bad, moved } = consistencyCases(size1, size2)
      expect(verifyConsistency(good)).toBe(true)
      for (const [desc, input] of bad) {
        expect(verifyConsistency(input as Parameters<typeof verifyConsistency>[0]), desc).toBe(false)
      }
      let rejected = 0
      for (const [m, n] of moved) {
        const sameShape = consistencyShape(m, n) === consistencyShape(size1, size2)
        expect(verifyConsistency({ ...good, size1: m, size2: n }), `sizes ${m} → ${n}`).toBe(sameShape)
        if (!sameShape) rejected++
      }
      expect(rejected).toBeGreaterThanOrEqual(3)
    })
  }

  it("binds the sizes only through the proof's shape, so the checkpoint must bind size to root", () => {
    // (6, 13) and (6, 14) have the same audit-path shape: a verifier cannot tell them apart, which is why
    // a certificate checks tree_size against the signed checkpoint that carries the root.
    expect(inclusionShape(6, 14)).toBe(inclusionShape(6, 13))
    const proof = log.inclusionProof(6, 13)
    const root = log.root(13)
    expect(verifyInclusion({ leafIndex: 6, treeSize: 14, leafHash: leaves[6]!, proof, root })).toBe(true)
    expect(verifyInclusion({ leafIndex: 6, treeSize: 14, leafHash: leaves[6]!, proof, root: log.root(14) })).toBe(false)
  })

  it("equal sizes: empty proof and equal roots only", () => {
    const root = log.root(9)
    expect(verifyConsistency({ size1: 9, size2: 9, proof: [], root1: root, root2: root })).toBe(true)
    expect(verifyConsistency({ size1: 9, size2: 9, proof: [root], root1: root, root2: root })).toBe(false)
    expect(verifyConsistency({ size1: 9, size2: 9, proof: [], root1: root, root2: log.root(10) })).toBe(false)
    expect(verifyConsistency({ size1: 9, size2: 9, proof: [], root1: root.subarray(1), root2: root.subarray(1) })).toBe(
      false
    )
  })
})

// ---------------------------------------------------------------------------------------------
// 5. Known answers, big sizes, storage details
// ---------------------------------------------------------------------------------------------

describe("known answers and edge sizes", () => {
  it("the RFC 6962 test leaves give the known root for n = 8", () => {
    const log = new MemoryMerkleLog()
    for (const leaf of rfcLeaves) log.append(leaf)
    expect(toHex(log.root())).toBe("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")
    expect(toHex(rfcLeaves[0]!)).toBe("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
    expect(toHex(nodeHash(rfcLeaves[0]!, rfcLeaves[1]!))).toBe(toHex(refNode(rfcLeaves[0]!, rfcLeaves[1]!)))
    let frontier = emptyFrontier
    for (const leaf of rfcLeaves) frontier = appendToFrontier(frontier, leaf).frontier
    expect(toHex(frontierRoot(frontier))).toBe("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")
  })

  it("proofs and verifiers stay exact for sizes up to 2^53 − 1", () => {
    // With every leaf equal, the perfect node at level L is the same hash for every index, so a reader can
    // serve a tree of any size; it also checks that only nodes complete at that size are ever asked for.
    const levels = [leafHash(Uint8Array.of(7))]
    for (let l = 1; l <= 53; l++) levels.push(nodeHash(levels[l - 1]!, levels[l - 1]!))
    const readerFor =
      (size: number): NodeReader =>
      (level, index) => {
        expect(index).toBeLessThan(Math.floor(size / 2 ** level))
        return levels[level]
      }
    const sizes = [2 ** 32 + 1, 2 ** 40 + 3, 2 ** 52, 2 ** 53 - 1, 2 ** 53 - 2, 3 * 2 ** 50 + 12345]
    for (const size of sizes) {
      const read = readerFor(size)
      const root = rootAt(size, read)!
      for (const leafIndex of [0, 1, size - 1, size - 2, Math.floor(size / 3), 2 ** 31, 2 ** 32 - 1]) {
        const proof = inclusionProof(leafIndex, size, read)!
        expect(proof.length).toBeLessThanOrEqual(53)
        expect(
          verifyInclusion({ leafIndex, treeSize: size, leafHash: levels[0]!, proof, root }),
          `${leafIndex}/${size}`
        ).toBe(true)
      }
      for (const size1 of [1, 3, 2 ** 31 + 5, 2 ** 32, size - 1, size]) {
        const proof = consistencyProof(size1, size, read)!
        const root1 = rootAt(size1, readerFor(size1))!
        expect(verifyConsistency({ size1, size2: size, proof, root1, root2: root }), `${size1}→${size}`).toBe(true)
        expect(verifyConsistency({ size1, size2: size, proof, root1: root, root2: root1 })).toBe(size1 === size)
      }
    }
  })

  it("the in-memory log grows its level buffers and hands out copies", () => {
    const leaves = makeLeaves(5000)
    const log = new MemoryMerkleLog()
    let frontier = emptyFrontier
    for (let n = 1; n <= leaves.length; n++) {
      log.append(leaves[n - 1]!)
      frontier = appendToFrontier(frontier, leaves[n - 1]!).frontier
      if (n % 97 === 0 || n === leaves.length) expect(toHex(log.root()), `${n}`).toBe(toHex(frontierRoot(frontier)))
    }
    const root = log.root()
    for (const m of [0, 1, 1023, 1024, 4095, 4096, 4999]) {
      expect(
        verifyInclusion({ leafIndex: m, treeSize: 5000, leafHash: leaves[m]!, proof: log.inclusionProof(m), root })
      ).toBe(true)
      expect(
        verifyConsistency({
          size1: m + 1,
          size2: 5000,
          proof: log.consistencyProof(m + 1),
          root1: log.root(m + 1),
          root2: root
        })
      ).toBe(true)
    }
    log.node(0, 0)!.fill(0)
    log.root().fill(0)
    log.inclusionProof(3)[0]!.fill(0)
    expect(toHex(log.node(0, 0)!)).toBe(toHex(leaves[0]!))
    expect(toHex(log.root())).toBe(toHex(root))
    expect(
      verifyInclusion({ leafIndex: 3, treeSize: 5000, leafHash: leaves[3]!, proof: log.inclusionProof(3), root })
    ).toBe(true)
  })
})
