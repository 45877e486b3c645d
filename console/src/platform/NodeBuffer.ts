/**
 * The slice of node:buffer that core/ uses (core/Bytes.ts, core/Signing.ts, core/Hash.ts), for the
 * browser build: console/vite.config.ts and console/tsconfig.json point `node:buffer` here. A `Buffer`
 * is a `Uint8Array` with Node's `from` / `toString` for the encodings core/ reads and writes (hex,
 * standard base64, UTF-8). core/ validates its text before decoding (strict hex and base64), so the
 * decoders here may be simple; they still never read past what they were given.
 */
const HEX_DIGITS = "0123456789abcdef"
const encoder = new TextEncoder()
const decoder = new TextDecoder()

export type BufferEncoding = "hex" | "base64" | "utf8" | "utf-8"

const hexToBytes = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length >> 1)
  for (let i = 0; i < out.length; i++) {
    const byte = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16)
    // Node stops at the first pair that is not hex; so do we.
    if (Number.isNaN(byte)) return out.subarray(0, i)
    out[i] = byte
  }
  return out
}

const bytesToHex = (bytes: Uint8Array): string => {
  let text = ""
  for (const byte of bytes) text += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 15]!
  return text
}

const base64ToBytes = (text: string): Uint8Array => {
  const binary = atob(text.replace(/[^A-Za-z0-9+/=]/g, ""))
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

const bytesToBase64 = (bytes: Uint8Array): string => {
  let binary = ""
  // Chunks keep String.fromCharCode's argument list small.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

export class Buffer extends Uint8Array {
  /** A view of `source` (an ArrayBuffer with offset and length), a copy of bytes, or text decoded. */
  static override from(source: ArrayBufferLike, byteOffset?: number, length?: number): Buffer
  static override from(source: Uint8Array | ReadonlyArray<number>): Buffer
  static override from(source: string, encoding?: BufferEncoding): Buffer
  static override from(source: unknown, second?: unknown, third?: unknown): Buffer {
    if (typeof source === "string") {
      const encoding = (second ?? "utf8") as BufferEncoding
      const bytes =
        encoding === "hex" ? hexToBytes(source) : encoding === "base64" ? base64ToBytes(source) : encoder.encode(source)
      return Buffer.view(bytes)
    }
    if (
      source instanceof ArrayBuffer ||
      (typeof SharedArrayBuffer !== "undefined" && source instanceof SharedArrayBuffer)
    ) {
      const offset = (second as number | undefined) ?? 0
      const length = (third as number | undefined) ?? source.byteLength - offset
      return new Buffer(source as ArrayBuffer, offset, length)
    }
    const copy = new Buffer((source as ArrayLike<number>).length)
    copy.set(source as ArrayLike<number>)
    return copy
  }

  static alloc(size: number): Buffer {
    return new Buffer(size)
  }

  static byteLength(text: string, _encoding?: BufferEncoding): number {
    return encoder.encode(text).length
  }

  static concat(parts: ReadonlyArray<Uint8Array>): Buffer {
    const out = new Buffer(parts.reduce((sum, part) => sum + part.length, 0))
    let offset = 0
    for (const part of parts) {
      out.set(part, offset)
      offset += part.length
    }
    return out
  }

  /** The same bytes as a Buffer, without copying. */
  static view(bytes: Uint8Array): Buffer {
    return new Buffer(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength)
  }

  override toString(encoding: BufferEncoding = "utf8"): string {
    if (encoding === "hex") return bytesToHex(this)
    if (encoding === "base64") return bytesToBase64(this)
    return decoder.decode(this)
  }
}
