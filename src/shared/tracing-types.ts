/** The shapes tracing.ts and the SDK behind it (tracing-sdk.ts) share. */

/** A W3C trace context as the client sent it (a `traceparent` header, Codex's `trace`, ACP's `_meta`). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What one span is: its name, kind (a client's call into us, or our call to Tau), attributes, and the client's context if any. */
export interface SpanRequest {
  name: string;
  kind: "server" | "client";
  attributes: SpanAttributes;
  /** The client's trace context: the span's parent instead of the current one. */
  parent?: TraceCarrier;
}

/** A span of something that already happened, with what happened in it as its events (times in ms since the epoch). */
export interface FinishedSpan {
  name: string;
  attributes: SpanAttributes;
  startTime: number;
  endTime: number;
  events: ReadonlyArray<{ name: string; time: number; attributes: SpanAttributes }>;
}

/** The running SDK, as the rest of the gateway sees it (tracing-sdk.ts implements it). */
export interface ActiveTracing {
  /** Runs `work` in a new span (the current span inside it), ending it when `work` settles; `failure` names a failure's attributes. */
  inSpan<T>(span: SpanRequest, work: () => Promise<T>, failure?: (error: unknown) => SpanAttributes): Promise<T>;
  /** Exports a span of something finished, in the current trace if there is one. */
  record(span: FinishedSpan): void;
  /** Exports what is still buffered within `budgetMs` (then gives it up) and stops the SDK. */
  shutdown(budgetMs: number): Promise<"flushed" | "gave up">;
}

/** Where tracing says what went wrong with its exports. */
export type TracingLog = (level: "info" | "warn", message: string, fields: Record<string, unknown>) => void;
