import { context, SpanKind, SpanStatusCode, type Context, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { ActiveTracing, SpanAttributes, SpanRequest, TraceCarrier } from "./tracing-types.js";

/**
 * The OpenTelemetry SDK, set up from the standard variables. Only tracing.ts imports this file,
 * and only once tracing is on. The exporter speaks OTLP/HTTP with JSON bodies; it reads its
 * headers, timeout and compression from the `OTEL_EXPORTER_OTLP_*` variables itself, and the
 * provider reads `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`. The context manager is the
 * Node one (AsyncLocalStorage), so a call to Tau made while a client call runs is its child.
 */

const SERVICE_NAME = "tau-gateway";
const w3c = new W3CTraceContextPropagator();
const carrierGetter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => (key === "traceparent" ? carrier.traceparent : key === "tracestate" ? carrier.tracestate : undefined),
};

export function startSdk(env: NodeJS.ProcessEnv, version: string): ActiveTracing {
  const exporter = new OTLPTraceExporter({ url: tracesUrl(env) });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: SERVICE_NAME, [ATTR_SERVICE_VERSION]: version }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register({ propagator: w3c });
  const tracer = provider.getTracer(SERVICE_NAME, version);
  return {
    inSpan: (span, work, failure) => runInSpan(tracer, span, work, failure),
    shutdown: () => provider.shutdown(),
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

function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

