/**
 * OpenTelemetry traces, when the standard `OTEL_*` variables ask for them: a span for every client
 * call and every call to Tau, exported over OTLP/HTTP. When they do not, nothing of the SDK is
 * loaded and a traced call costs one check: `inSpan` runs the work as it is. The SDK lives in
 * tracing-sdk.ts, imported only by `startTracing` once it knows tracing is on, so a gateway
 * without tracing never loads it (and `serve` starts as fast as before).
 */

import type { ActiveTracing, FinishedSpan, SpanAttributes, SpanRequest, TraceCarrier, TracingLog } from "./tracing-types.js";
import { isObject } from "./unknown-values.js";

export type { ActiveTracing, FinishedSpan, SpanAttributes, SpanRequest, TraceCarrier, TracingLog } from "./tracing-types.js";

/** A stop of tracing: the last spans get `budgetMs` to be exported, then are given up. */
export type StopTracing = (budgetMs: number) => Promise<void>;

/**
 * The share of a command's drain budget (`--drain-timeout`) its last spans get to be exported once
 * everything else has stopped: a collector that is down or slow delays a stop by no more.
 */
export const TRACING_FLUSH_SHARE = 0.25;

/** The export budget of a stop whose drain budget is `drainTimeoutMs`. */
export const tracingFlushBudget = (drainTimeoutMs: number): number => Math.round(drainTimeoutMs * TRACING_FLUSH_SHARE);

let active: ActiveTracing | undefined;

/**
 * Runs `work` in a span described by `describe` when tracing is on; otherwise just runs it
 * (`describe` is not even called, so an untraced call builds nothing).
 */
export function inSpan<T>(describe: () => SpanRequest, work: () => Promise<T>, failure?: (error: unknown) => SpanAttributes): Promise<T> {
  if (active === undefined) return work();
  return active.inSpan(describe(), work, failure);
}

/** Exports the span `describe` gives when tracing is on; otherwise nothing (and `describe` is not called). */
export function recordSpan(describe: () => FinishedSpan): void {
  active?.record(describe());
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
 * a function that flushes and stops it within a budget (a no-op when tracing stayed off). `log`
 * hears of failed exports (once per run of failures) and of spans given up at the stop.
 */
export async function startTracing(env: NodeJS.ProcessEnv, version: string, log: TracingLog = () => undefined): Promise<StopTracing> {
  if (active !== undefined || !tracingRequested(env)) return async () => undefined;
  const { startSdk } = await import("./tracing-sdk.js");
  const started = startSdk(env, version, log);
  active = started;
  return async (budgetMs) => {
    if (active === started) active = undefined;
    await started.shutdown(budgetMs);
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
