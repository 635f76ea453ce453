/**
 * OpenTelemetry traces, when the standard `OTEL_*` variables ask for them: a span for every client
 * call and every call to Tau, exported over OTLP/HTTP. When they do not, nothing of the SDK is
 * loaded and a traced call costs one check: `inSpan` runs the work as it is. The SDK lives in
 * tracing-sdk.ts, imported only by `startTracing` once it knows tracing is on, so a gateway
 * without tracing never loads it (and `serve` starts as fast as before).
 */

import type { ActiveTracing, SpanAttributes, SpanRequest, TraceCarrier } from "./tracing-types.js";
import { isObject } from "./unknown-values.js";

export type { ActiveTracing, SpanAttributes, SpanRequest, TraceCarrier } from "./tracing-types.js";

let active: ActiveTracing | undefined;

/**
 * Runs `work` in a span described by `describe` when tracing is on; otherwise just runs it
 * (`describe` is not even called, so an untraced call builds nothing).
 */
export function inSpan<T>(describe: () => SpanRequest, work: () => Promise<T>, failure?: (error: unknown) => SpanAttributes): Promise<T> {
  if (active === undefined) return work();
  return active.inSpan(describe(), work, failure);
}

/** Whether tracing is on in this process. */
export function tracingActive(): boolean {
  return active !== undefined;
}

/**
 * Whether the environment asks for traces: an OTLP endpoint is set (for all signals or for
 * traces), the SDK is not disabled (`OTEL_SDK_DISABLED=true`) and the traces exporter is not
 * turned off (`OTEL_TRACES_EXPORTER=none`).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts tracing for this process when `env` asks for it (see `tracingRequested`); resolves with
 * a function that flushes and stops it (a no-op when tracing stayed off).
 */
export async function startTracing(env: NodeJS.ProcessEnv, version: string): Promise<() => Promise<void>> {
  if (active !== undefined || !tracingRequested(env)) return async () => undefined;
  const { startSdk } = await import("./tracing-sdk.js");
  const started = startSdk(env, version);
  active = started;
  return async () => {
    if (active === started) active = undefined;
    await started.shutdown();
  };
}

/** The W3C trace context in a value shaped like `{traceparent, tracestate}` (Codex's `trace`, ACP's `_meta`); undefined if it has none. */
export function carrierIn(value: unknown): TraceCarrier | undefined {
  if (!isObject(value)) return undefined;
  const { traceparent, tracestate } = value;
  if (typeof traceparent !== "string") return undefined;
  return typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
}

/** The W3C trace context of HTTP request headers (also a WebSocket upgrade's); undefined without a `traceparent`. */
export function carrierOfHeaders(headers: Record<string, string | string[] | undefined>): TraceCarrier | undefined {
  const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);
  return carrierIn({ traceparent: one(headers.traceparent), tracestate: one(headers.tracestate) });
}
