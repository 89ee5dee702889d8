// An in-process OpenTelemetry collector for tests: OTLP/gRPC
// (`opentelemetry.proto.collector.trace.v1.TraceService/Export`, served by grpc-js) and OTLP/HTTP
// protobuf (`POST /v1/traces` on node:http), both on loopback, decoding each export with protobufjs
// (test/support/otlp/trace-export.proto) into flat span records.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

/** One received span, ids in hex as in `traceparent`. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** The instrumentation scope: `portcullis` for Portcullis's tracer, `envoy` for Envoy's. */
  readonly scope: string;
  /** The resource's `service.name`. */
  readonly service: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>` of the gRPC receiver. */
  readonly grpcEndpoint: string;
  /** `http://127.0.0.1:<port>` of the HTTP receiver (spans POSTed to `/v1/traces`). */
  readonly httpEndpoint: string;
  /** Every span received so far, in arrival order. */
  readonly spans: ReceivedSpan[];
  stop(): Promise<void>;
}

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

interface DecodedValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
}
interface DecodedKeyValue {
  key: string;
  value?: DecodedValue;
}
interface DecodedRequest {
  resourceSpans?: {
    resource?: { attributes?: DecodedKeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: DecodedKeyValue[];
      }[];
    }[];
  }[];
}

function attributesOf(
  list: readonly DecodedKeyValue[] | undefined,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value?.stringValue ?? value?.boolValue ?? value?.doubleValue ?? value?.intValue;
    if (v !== undefined) out[key] = typeof v === 'string' && value?.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

/** Starts both receivers on free loopback ports. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const root = protobuf.loadSync(new URL('./otlp/trace-export.proto', import.meta.url).pathname);
  const requestType = root.lookupType('portcullis.test.otlp.ExportTraceServiceRequest');
  const responseBytes = Buffer.from(
    root.lookupType('portcullis.test.otlp.ExportTraceServiceResponse').encode({}).finish(),
  );
  const spans: ReceivedSpan[] = [];
  const receive = (bytes: Buffer): void => {
    const decoded = requestType.toObject(requestType.decode(bytes), {
      bytes: String,
      longs: String,
    }) as DecodedRequest;
    for (const resourceSpans of decoded.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scope of resourceSpans.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          spans.push({
            traceId: Buffer.from(span.traceId, 'base64').toString('hex'),
            spanId: Buffer.from(span.spanId, 'base64').toString('hex'),
            parentSpanId: Buffer.from(span.parentSpanId ?? '', 'base64').toString('hex'),
            name: span.name,
            scope: scope.scope?.name ?? '',
            service,
            attributes: attributesOf(span.attributes),
          });
    }
  };
  const grpcServer = new grpc.Server();
  grpcServer.addService(
    {
      Export: {
        path: EXPORT_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (bytes: Buffer) => bytes,
        responseSerialize: (value: Buffer) => value,
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    },
    {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        receive(call.request);
        callback(null, responseBytes);
      },
    },
  );
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err === null ? resolve(port) : reject(err),
    ),
  );
  const httpServer: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      receive(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(responseBytes);
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const httpPort = (httpServer.address() as AddressInfo).port;
  return {
    grpcEndpoint: `http://127.0.0.1:${grpcPort}`,
    httpEndpoint: `http://127.0.0.1:${httpPort}`,
    spans,
    async stop() {
      grpcServer.forceShutdown();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
