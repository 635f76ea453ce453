import { Counter, Histogram, type MetricObjectWithValues, type MetricValueWithName, type Registry, type RegistryContentType } from "prom-client";

/** The registries a metric is registered in, of either exposition format. */
type Registers = Array<Registry<RegistryContentType>>;
import type { CallRecord } from "../transports/call-observer.js";

/**
 * The answered client requests, counted by the gateway itself and handed to prom-client only when
 * metrics are scraped: `tau_gateway_requests_total` (by dialect, method, outcome) and
 * `tau_gateway_request_duration_seconds` (by dialect and method). prom-client's `inc` and `observe`
 * check and hash their label objects on every call, a few microseconds per request: on the `/tau`
 * relay, which otherwise costs tens of microseconds a request, a measurable share. Counting here is
 * two map lookups, an addition and a bucket search.
 */

interface MethodTally {
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative): `buckets[i]` ≤ `bounds[i]`, above the last: none. */
  readonly buckets: Float64Array;
  readonly outcomes: Map<string, number>;
}

export class CallTally {
  private readonly byDialect = new Map<string, Map<string, MethodTally>>();

  constructor(readonly bounds: readonly number[]) {}

  record(call: CallRecord): void {
    let methods = this.byDialect.get(call.dialect);
    if (!methods) this.byDialect.set(call.dialect, (methods = new Map()));
    let tally = methods.get(call.method);
    if (!tally) methods.set(call.method, (tally = { count: 0, sum: 0, buckets: new Float64Array(this.bounds.length), outcomes: new Map() }));
    tally.count++;
    tally.sum += call.seconds;
    const bucket = this.bucketOf(call.seconds);
    if (bucket < this.bounds.length) tally.buckets[bucket]!++;
    tally.outcomes.set(call.outcome, (tally.outcomes.get(call.outcome) ?? 0) + 1);
  }

  private bucketOf(seconds: number): number {
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    return i;
  }

  /** Every dialect and method counted, with its tally. */
  *entries(): Generator<[dialect: string, method: string, tally: Readonly<MethodTally>]> {
    for (const [dialect, methods] of this.byDialect) for (const [method, tally] of methods) yield [dialect, method, tally];
  }

  /** `tau_gateway_requests_total`, read from this tally at scrape time. */
  requestsCounter(registers: Registers): Counter<"dialect" | "method" | "outcome"> {
    const tally = this;
    return new Counter({
      name: "tau_gateway_requests_total",
      help: "Client requests answered, by dialect (ask, tau, codex, acp), method and outcome (ok or the error code's name).",
      labelNames: ["dialect", "method", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const [dialect, method, { outcomes }] of tally.entries()) for (const [outcome, n] of outcomes) this.inc({ dialect, method, outcome }, n);
      },
    });
  }

  /** `tau_gateway_request_duration_seconds`, read from this tally at scrape time. */
  durationsHistogram(registers: Registers): Histogram<"dialect" | "method"> {
    return new TalliedHistogram(this, registers);
  }
}

const DURATIONS = { name: "tau_gateway_request_duration_seconds", help: "Time from a client request to its answer, by dialect and method." } as const;

/** What a histogram hands the registry at a scrape (prom-client's types leave out the shared labels). */
type Samples = MetricObjectWithValues<MetricValueWithName<string>>;

/** A histogram whose samples are a CallTally's: prom-client formats it, the tally counts. */
class TalliedHistogram extends Histogram<"dialect" | "method"> {
  constructor(
    private readonly tally: CallTally,
    registers: Registers,
  ) {
    super({
      ...DURATIONS,
      labelNames: ["dialect", "method"],
      buckets: [...tally.bounds],
      registers,
    });
  }

  /** The samples as prom-client's own histogram lays them out (cumulative buckets, +Inf, sum, count). */
  private samples(): Samples {
    const { name, help } = DURATIONS;
    const bounds = this.tally.bounds;
    const values: Array<MetricValueWithName<string> & { sharedLabels: Record<string, string> }> = [];
    for (const [dialect, method, tally] of this.tally.entries()) {
      const sharedLabels = { dialect, method };
      let cumulative = 0;
      bounds.forEach((le, i) => {
        cumulative += tally.buckets[i]!;
        values.push({ labels: { le }, sharedLabels, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels, value: tally.count, metricName: `${name}_bucket` });
      values.push({ labels: {}, sharedLabels, value: tally.sum, metricName: `${name}_sum` });
      values.push({ labels: {}, sharedLabels, value: tally.count, metricName: `${name}_count` });
    }
    return { name, help, type: "histogram", values, aggregator: "sum" } as unknown as Samples;
  }

  // prom-client's get() (getMetricsAsJSON) reads this too, and folds the shared labels in.
  async getForPromString(): Promise<Samples> {
    return this.samples();
  }
}
