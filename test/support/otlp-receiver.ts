import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OTLP/HTTP trace receiver in the test process: accepts the JSON exports
 * (`POST /v1/traces`, ExportTraceServiceRequest) the gateway's exporter sends and keeps every
 * span, flattened with its service name.
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number };
  service: unknown;
  /** The span's events, in order. */
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT (the value for OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received, whatever their path (a request elsewhere than /v1/traces is a test failure). */
  readonly paths: string[];
  /** Resolves once `predicate` holds for the spans received so far (checked on every export). */
  until(predicate: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      paths.push(req.url ?? "");
      if (req.url === "/v1/traces" && req.headers["content-type"]?.includes("json")) spans.push(...spansOf(JSON.parse(body)));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    paths,
    until(predicate, what, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${what} exported in time; spans: ${spans.map((s) => s.name).join(", ")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function spansOf(request: { resourceSpans?: Array<{ resource?: { attributes?: Array<{ key: string; value: AnyValue }> }; scopeSpans?: Array<{ spans?: any[] }> }> }): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = attributesOf(resourceSpans.resource?.attributes)["service.name"];
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          status: span.status ?? {},
          service,
          events: (span.events ?? []).map((event: { name: string; attributes?: Array<{ key: string; value: AnyValue }> }) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        });
      }
    }
  }
  return out;
}

function attributesOf(attributes: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
  return out;
}
