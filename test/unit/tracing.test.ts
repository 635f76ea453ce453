import { describe, expect, it } from "vitest";
import { carrierIn, carrierOfHeaders, inSpan, startTracing, tracingActive, tracingRequested } from "../../src/shared/tracing.js";

describe("when tracing is on", () => {
  it("an OTLP endpoint turns it on; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keeps it off", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: "gw", OTEL_TRACES_SAMPLER: "always_on" })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "TRUE" })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "false" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "none" })).toBe(false);
  });

  it("off, a traced call runs as it is: no span is even described", async () => {
    const stop = await startTracing({}, "0.0.0");
    expect(tracingActive()).toBe(false);
    let described = false;
    const result = await inSpan(
      () => {
        described = true;
        return { name: "x", kind: "server", attributes: {} };
      },
      async () => 42,
    );
    expect(result).toBe(42);
    expect(described).toBe(false);
    await stop(0);
  });
});

describe("the client's trace context", () => {
  it("is read from headers, Codex's `trace` and ACP's `_meta`, only with a string traceparent", () => {
    expect(carrierOfHeaders({ traceparent: "00-a-b-01", tracestate: "k=v" })).toEqual({ traceparent: "00-a-b-01", tracestate: "k=v" });
    expect(carrierOfHeaders({ host: "x" })).toBeUndefined();
    expect(carrierIn({ traceparent: "00-a-b-01" })).toEqual({ traceparent: "00-a-b-01" });
    expect(carrierIn({ traceparent: 1 })).toBeUndefined();
    expect(carrierIn("00-a-b-01")).toBeUndefined();
    expect(carrierIn(null)).toBeUndefined();
  });
});
