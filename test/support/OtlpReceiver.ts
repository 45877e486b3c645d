/**
 * A fake OpenTelemetry collector on loopback: accepts OTLP/HTTP `POST /v1/traces` in either
 * encoding (`application/json`, `application/x-protobuf`), answers 200, and keeps every request's
 * raw bytes (to search them for what must never be exported) and its spans, decoded. The protobuf
 * decoder below reads the few messages of `ExportTraceServiceRequest` a span needs, straight from
 * the wire format (opentelemetry-proto's trace.proto and common.proto), so the test does not trust
 * the exporter's own encoder to read back what it wrote.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** "" for a root span. */
  readonly parentSpanId: string
  readonly name: string
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number
  readonly startNs: bigint
  readonly endNs: bigint
  readonly attributes: Readonly<Record<string, unknown>>
  /** The resource's attributes (service.name, candor.roles). */
  readonly resource: Readonly<Record<string, unknown>>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly status: number
}

export interface ReceivedExport {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT names. */
  readonly endpoint: string
  readonly exports: ReadonlyArray<ReceivedExport>
  /** Every span received so far, in either encoding. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  readonly close: () => Promise<void>
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const exports: Array<ReceivedExport> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      exports.push({
        path: request.url ?? "/",
        contentType: request.headers["content-type"] ?? "",
        body: Buffer.concat(chunks)
      })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    spans: () => exports.filter((e) => e.path === "/v1/traces").flatMap(decodeExport),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const decodeExport = (received: ReceivedExport): Array<ReceivedSpan> =>
  received.contentType.startsWith("application/json")
    ? fromJson(JSON.parse(received.body.toString("utf8")))
    : fromProtobuf(received.body)

// ---- OTLP/JSON (ids as hex strings, times as decimal strings, values as AnyValue objects) ----

const jsonValue = (value: any): unknown =>
  value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue)

const jsonAttributes = (list: any): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((kv: any) => [kv.key, jsonValue(kv.value ?? {})]))

const fromJson = (body: any): Array<ReceivedSpan> =>
  (body.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: any): ReceivedSpan => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        kind: s.kind,
        startNs: BigInt(s.startTimeUnixNano),
        endNs: BigInt(s.endTimeUnixNano),
        attributes: jsonAttributes(s.attributes),
        resource: jsonAttributes(rs.resource?.attributes),
        status: s.status?.code ?? 0
      }))
    )
  )

// ---- OTLP/protobuf: the wire format, field by field ----

type Field = { readonly wire: 0; readonly value: bigint } | { readonly wire: 1 | 2 | 5; readonly value: Buffer }

/** A message's fields by number, in order. */
const fields = (bytes: Buffer): Map<number, Array<Field>> => {
  const out = new Map<number, Array<Field>>()
  let at = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      const byte = bytes[at++]!
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      shift += 7n
    }
  }
  while (at < bytes.length) {
    const tag = Number(varint())
    const number = tag >>> 3
    const wire = tag & 7
    let field: Field
    if (wire === 0) field = { wire, value: varint() }
    else if (wire === 1) field = { wire, value: bytes.subarray(at, (at += 8)) }
    else if (wire === 5) field = { wire, value: bytes.subarray(at, (at += 4)) }
    else if (wire === 2) {
      const length = Number(varint())
      field = { wire, value: bytes.subarray(at, (at += length)) }
    } else throw new Error(`protobuf wire type ${wire} not expected in OTLP traces`)
    const list = out.get(number) ?? []
    list.push(field)
    out.set(number, list)
  }
  return out
}

const all = (m: Map<number, Array<Field>>, n: number): Array<Buffer> =>
  (m.get(n) ?? []).flatMap((f) => (f.wire === 0 ? [] : [f.value]))
const one = (m: Map<number, Array<Field>>, n: number): Buffer | undefined => all(m, n)[0]
const int = (m: Map<number, Array<Field>>, n: number): bigint => {
  const f = m.get(n)?.[0]
  return f === undefined ? 0n : f.wire === 0 ? f.value : f.value.readBigUInt64LE(0)
}
const text = (m: Map<number, Array<Field>>, n: number): string => one(m, n)?.toString("utf8") ?? ""
const hex = (m: Map<number, Array<Field>>, n: number): string => one(m, n)?.toString("hex") ?? ""

/** AnyValue: 1 string, 2 bool, 3 int, 4 double. */
const anyValue = (bytes: Buffer | undefined): unknown => {
  if (bytes === undefined) return undefined
  const m = fields(bytes)
  if (m.has(1)) return text(m, 1)
  if (m.has(2)) return int(m, 2) === 1n
  if (m.has(3)) return Number(BigInt.asIntN(64, int(m, 3)))
  if (m.has(4)) return one(m, 4)!.readDoubleLE(0)
  return undefined
}

/** KeyValue: 1 key, 2 value. */
const protoAttributes = (list: Array<Buffer>): Record<string, unknown> =>
  Object.fromEntries(list.map((kv) => fields(kv)).map((m) => [text(m, 1), anyValue(one(m, 2))]))

/** ExportTraceServiceRequest 1 → ResourceSpans (1 resource, 2 scope spans) → ScopeSpans (2 spans) → Span. */
const fromProtobuf = (body: Buffer): Array<ReceivedSpan> =>
  all(fields(body), 1).flatMap((rsBytes) => {
    const rs = fields(rsBytes)
    const resourceBytes = one(rs, 1)
    const resource = resourceBytes === undefined ? {} : protoAttributes(all(fields(resourceBytes), 1))
    return all(rs, 2).flatMap((ssBytes) =>
      all(fields(ssBytes), 2).map((spanBytes): ReceivedSpan => {
        // Span: 1 trace id, 2 span id, 4 parent span id, 5 name, 6 kind, 7 start, 8 end, 9 attributes, 15 status.
        const s = fields(spanBytes)
        const status = one(s, 15)
        return {
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: text(s, 5),
          kind: Number(int(s, 6)),
          startNs: int(s, 7),
          endNs: int(s, 8),
          attributes: protoAttributes(all(s, 9)),
          resource,
          status: status === undefined ? 0 : Number(int(fields(status), 3))
        }
      })
    )
  })
