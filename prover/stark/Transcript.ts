/**
 * The Fiat–Shamir transcript: a SHA-256 hash chain. Everything the prover sends is absorbed (with
 * a label and its length) before the challenges that depend on it are drawn, starting with the
 * whole public statement, so a proof is bound to its statement and cannot be replayed for another.
 *
 *   state₀        = SHA-256("candor/v1/stark-transcript\0" ‖ protocol)
 *   absorb(l, d)  : state = SHA-256(state ‖ 0x01 ‖ u8(|l|) ‖ l ‖ u32be(|d|) ‖ d), counter = 0
 *   squeeze()     = SHA-256(state ‖ 0x00 ‖ u32be(counter++))
 *   grinding hash = SHA-256(state ‖ 0x02 ‖ u64be(nonce))
 *
 * A base-field element is the next 8-byte little-endian word of the squeezed output (four per
 * squeeze), skipped when ≥ p; query indices take fresh squeezes, 4 bytes big-endian each.
 */
import { concatBytes, utf8 } from "../../core/Bytes.js"
import { sha256, taggedHash } from "../../core/Hash.js"
import type { Ext } from "../field/Cubic.js"
import { P } from "../field/Goldilocks.js"

const u32be = (n: number): Uint8Array => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, n, false)
  return out
}

export const u64be = (n: bigint): Uint8Array => {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, n, false)
  return out
}

const leadingZeroBits = (digest: Uint8Array): number => {
  let zeros = 0
  for (const byte of digest) {
    if (byte === 0) {
      zeros += 8
      continue
    }
    return zeros + Math.clz32(byte) - 24
  }
  return zeros
}

export class Transcript {
  private state: Uint8Array
  private counter = 0
  /** Words of the last squeeze not yet drawn. */
  private words: Array<bigint> = []

  constructor(protocol: string) {
    this.state = taggedHash("stark-transcript", utf8(protocol))
  }

  absorb(label: string, data: Uint8Array): void {
    const name = utf8(label)
    this.state = sha256(concatBytes(this.state, Uint8Array.of(1, name.length), name, u32be(data.length), data))
    this.counter = 0
    this.words = []
  }

  private squeeze(): Uint8Array {
    return sha256(concatBytes(this.state, Uint8Array.of(0), u32be(this.counter++)))
  }

  /** A uniform base-field element: the next word, skipped when ≥ p (probability 2^-32). */
  base(): bigint {
    for (;;) {
      if (this.words.length === 0) {
        const digest = this.squeeze()
        const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength)
        this.words = [0, 8, 16, 24].map((at) => view.getBigUint64(at, true))
      }
      const value = this.words.shift()!
      if (value < P) return value
    }
  }

  ext(): Ext {
    return [this.base(), this.base(), this.base()]
  }

  /** An extension element outside the base field, hence outside every trace and evaluation domain. */
  extOutsideBase(): Ext {
    for (;;) {
      const e = this.ext()
      if (e[1] !== 0n || e[2] !== 0n) return e
    }
  }

  /** `count` uniform indices below `range`, a power of two up to 2^32 (so masking is unbiased); repeats allowed. */
  indices(count: number, range: number): Array<number> {
    this.words = []
    const out: Array<number> = []
    while (out.length < count) {
      const digest = this.squeeze()
      const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength)
      for (let i = 0; i < 8 && out.length < count; i++) out.push(view.getUint32(4 * i, false) % range)
    }
    return out
  }

  private grindingZeros(nonce: bigint): number {
    return leadingZeroBits(sha256(concatBytes(this.state, Uint8Array.of(2), u64be(nonce))))
  }

  /** The smallest nonce whose grinding hash starts with `bits` zero bits (deterministic, so proofs are reproducible). */
  grind(bits: number): bigint {
    let nonce = 0n
    while (this.grindingZeros(nonce) < bits) nonce++
    return nonce
  }

  checkGrinding(bits: number, nonce: bigint): boolean {
    return this.grindingZeros(nonce) >= bits
  }
}
