/**
 * The binary proof: a flat sequence of fixed-size fields whose count the verifier derives from the
 * statement and the transcript, never from the proof. Base-field elements are 8 bytes
 * little-endian and must be canonical (< p), extension elements are three of those, hashes 32 bytes,
 * the grinding nonce 8 bytes big-endian. Reading past the end or leaving bytes unread rejects.
 */
import type { Ext } from "../field/Cubic.js"
import { P } from "../field/Goldilocks.js"

export const PROOF_MAGIC = Uint8Array.of(0x43, 0x56, 0x53, 0x01) // "CVS", format 1

/** A proof that fails to parse or to verify, with the reason (for tests and diagnostics). */
export class ProofRejected extends Error {
  override readonly name = "ProofRejected"
}

export class ProofWriter {
  private readonly chunks: Array<Uint8Array> = []
  private length = 0

  bytes(data: Uint8Array): void {
    this.chunks.push(data)
    this.length += data.length
  }

  base(value: bigint): void {
    const out = new Uint8Array(8)
    new DataView(out.buffer).setBigUint64(0, value, true)
    this.bytes(out)
  }

  ext(value: Ext): void {
    for (const limb of value) this.base(limb)
  }

  u64be(value: bigint): void {
    const out = new Uint8Array(8)
    new DataView(out.buffer).setBigUint64(0, value, false)
    this.bytes(out)
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length)
    let offset = 0
    for (const chunk of this.chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }
}

export class ProofReader {
  private offset = 0
  private readonly view: DataView

  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  }

  bytes(length: number): Uint8Array {
    if (this.offset + length > this.data.length) throw new ProofRejected("proof is truncated")
    const out = this.data.subarray(this.offset, this.offset + length)
    this.offset += length
    return out
  }

  hash(): Uint8Array {
    return this.bytes(32)
  }

  base(): bigint {
    const at = this.offset
    this.bytes(8)
    const value = this.view.getBigUint64(at, true)
    if (value >= P) throw new ProofRejected("non-canonical field element")
    return value
  }

  ext(): Ext {
    return [this.base(), this.base(), this.base()]
  }

  /** `count` canonical base elements, and the bytes they were read from (an opened Merkle leaf). */
  baseBlock(count: number): { readonly values: BigUint64Array; readonly bytes: Uint8Array } {
    const at = this.offset
    const bytes = this.bytes(8 * count)
    const values = new BigUint64Array(count)
    for (let i = 0; i < count; i++) {
      const value = this.view.getBigUint64(at + 8 * i, true)
      if (value >= P) throw new ProofRejected("non-canonical field element")
      values[i] = value
    }
    return { values, bytes }
  }

  u64be(): bigint {
    const at = this.offset
    this.bytes(8)
    return this.view.getBigUint64(at, false)
  }

  end(): void {
    if (this.offset !== this.data.length) throw new ProofRejected("trailing bytes after the proof")
  }
}
