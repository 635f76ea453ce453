import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { convertLegacyHttpOptions } from "@opentelemetry/otlp-exporter-base/node-http";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-node";
import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { gzip } from "node:zlib";

/**
 * OTLP/HTTP (JSON) span export whose every request has a hard deadline, from the first byte sent to
 * the last byte of the answer. The SDK's own exporter only times out a socket that stays idle (a
 * collector answering one byte at a time never times out), retries with timers that nothing can
 * cancel, and keeps its sockets past a stop: so a collector that is down or slow kept a stopping
 * gateway waiting seconds, or for ever. Here a request past its deadline is destroyed with its
 * socket, nothing is retried (the batch is dropped and said so once; the next batch tries again),
 * and `close` destroys whatever is still open, at once.
 *
 * Endpoint, headers (`OTEL_EXPORTER_OTLP_HEADERS`), timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`, default
 * 10 s) and compression are read from the standard variables as the SDK's exporter reads them.
 */

export interface ExportFailureLog {
  (message: string, fields: Record<string, unknown>): void;
}

export class BoundedSpanExporter implements SpanExporter {
  private readonly config: ReturnType<typeof convertLegacyHttpOptions>;
  private readonly agent: HttpAgent;
  private readonly open = new Set<ClientRequest>();
  private closed = false;
  private failing = false;

  constructor(
    url: string,
    private readonly logFailure: ExportFailureLog = () => undefined,
  ) {
    this.config = convertLegacyHttpOptions({ url }, "TRACES", "v1/traces", { "Content-Type": "application/json" });
    const secure = new URL(this.config.url).protocol === "https:";
    this.agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: 2 }) : new HttpAgent({ keepAlive: true, maxSockets: 2 });
  }

  /** How long one export may take, first byte to last. */
  get timeoutMs(): number {
    return this.config.timeoutMillis;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.closed) return done({ code: ExportResultCode.FAILED, error: new Error("the exporter is closed") });
    const body = JsonTraceSerializer.serializeRequest(spans);
    if (!body) return done({ code: ExportResultCode.FAILED, error: new Error("spans could not be serialised") });
    this.send(body).then(
      () => {
        if (this.failing) this.logFailure("exporting spans works again", { url: this.config.url });
        this.failing = false;
        done({ code: ExportResultCode.SUCCESS });
      },
      (error: Error) => {
        // Once per run of failures: a collector that is down must not flood the log.
        if (!this.failing && !this.closed) this.logFailure("exporting spans failed; their batch is dropped", { url: this.config.url, spans: spans.length, error: error.message });
        this.failing = true;
        done({ code: ExportResultCode.FAILED, error });
      },
    );
  }

  async forceFlush(): Promise<void> {}

  /** Destroys every request still open and every socket, at once. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const request of this.open) request.destroy(new Error("the exporter closed"));
    this.open.clear();
    this.agent.destroy();
  }

  private async send(payload: Uint8Array): Promise<void> {
    const headers: Record<string, string> = { ...(await this.config.headers()) };
    let body: Uint8Array = payload;
    if (this.config.compression === "gzip") {
      body = await new Promise<Buffer>((resolve, reject) => gzip(payload, (err, out) => (err ? reject(err) : resolve(out))));
      headers["Content-Encoding"] = "gzip";
    }
    headers["Content-Length"] = String(body.byteLength);
    const url = new URL(this.config.url);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    await new Promise<void>((resolve, reject) => {
      const request = send(url, { method: "POST", headers, agent: this.agent });
      this.open.add(request);
      const deadline = setTimeout(() => request.destroy(new Error(`no whole answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      const settle = (error?: Error) => {
        clearTimeout(deadline);
        this.open.delete(request);
        if (error) reject(error);
        else resolve();
      };
      request.on("error", settle);
      request.on("response", (response) => {
        response.on("error", settle);
        // The answer is read (a keep-alive socket is reused only once it is), but never kept.
        response.resume();
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          settle(status >= 200 && status < 300 ? undefined : new Error(`the collector answered HTTP ${status}`));
        });
      });
      request.end(body);
    });
  }
}
