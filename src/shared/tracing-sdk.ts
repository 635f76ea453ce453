import { context, SpanKind, SpanStatusCode, type Context, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { BoundedSpanExporter } from "./bounded-span-exporter.js";
import type { ActiveTracing, FinishedSpan, SpanAttributes, SpanRequest, TraceCarrier, TracingLog } from "./tracing-types.js";

/**
 * The OpenTelemetry SDK, set up from the standard variables. Only tracing.ts imports this file,
 * and only once tracing is on. The exporter speaks OTLP/HTTP with JSON bodies, each export
 * bounded in time (bounded-span-exporter.ts); the batch processor's queue is bounded too
 * (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048 spans by default: spans past it are dropped). The
 * provider reads `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`. The context manager is the
 * Node one (AsyncLocalStorage), so a call to Tau made while a client call runs is its child.
 */

const SERVICE_NAME = "tau-gateway";
const w3c = new W3CTraceContextPropagator();
const carrierGetter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => (key === "traceparent" ? carrier.traceparent : key === "tracestate" ? carrier.tracestate : undefined),
};

export function startSdk(env: NodeJS.ProcessEnv, version: string, log: TracingLog): ActiveTracing {
  const exporter = new BoundedSpanExporter(tracesUrl(env), (message, fields) => log("warn", message, fields));
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: SERVICE_NAME, [ATTR_SERVICE_VERSION]: version }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter, { exportTimeoutMillis: exporter.timeoutMs + 1_000 })] });
  provider.register({ propagator: w3c });
  const tracer = provider.getTracer(SERVICE_NAME, version);
  return {
    inSpan: (span, work, failure) => runInSpan(tracer, span, work, failure),
    record: (span) => recordFinished(tracer, span),
    shutdown: async (budgetMs) => {
      // The last spans get `budgetMs` to go out; past it the export is given up: its requests and sockets are destroyed.
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<"gave up">((resolve) => (timer = setTimeout(() => resolve("gave up"), budgetMs)));
      const outcome = await Promise.race([provider.shutdown().then(() => "flushed" as const, () => "gave up" as const), gaveUp]);
      clearTimeout(timer);
      await exporter.shutdown();
      if (outcome === "gave up") log("warn", "tracing: gave up exporting the last spans", { budgetMs });
      return outcome;
    },
  };
}

/** Where spans go: the traces endpoint as given, or the general endpoint's `/v1/traces` (as the OTLP specification says). */
function tracesUrl(env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT!.trim();
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

function runInSpan<T>(tracer: Tracer, request: SpanRequest, work: () => Promise<T>, failure?: (error: unknown) => SpanAttributes): Promise<T> {
  const parent: Context = request.parent ? w3c.extract(context.active(), request.parent, carrierGetter) : context.active();
  // A carrier without a valid traceparent extracts nothing: the span then continues the current trace.
  const kind = request.kind === "server" ? SpanKind.SERVER : SpanKind.CLIENT;
  return tracer.startActiveSpan(request.name, { kind, attributes: defined(request.attributes) }, parent, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.setAttributes(defined(failure?.(error) ?? {}));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

function recordFinished(tracer: Tracer, finished: FinishedSpan): void {
  const span = tracer.startSpan(finished.name, { kind: SpanKind.INTERNAL, attributes: defined(finished.attributes), startTime: finished.startTime });
  for (const event of finished.events) span.addEvent(event.name, defined(event.attributes), event.time);
  span.end(finished.endTime);
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

