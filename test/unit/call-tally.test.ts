import { Counter, Histogram, Registry, type RegistryContentType } from "prom-client";
import { describe, expect, it } from "vitest";
import { CallTally } from "../../src/gateway/call-tally.js";

/**
 * The gateway counts answered requests itself and hands them to prom-client at scrape time
 * (call-tally.ts): the exposition must be what prom-client's own counter and histogram give for
 * the same calls, in either text format, a duration on a bucket's bound counted in that bucket.
 */

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const CALLS = [
  ["tau", "session.list", "ok", 0.0001],
  ["tau", "session.list", "busy", 0.005],
  ["ask", "session/send", "ok", 0.3],
  ["tau", "session.submit", "ok", 400],
  ["ask", "session/send", "invalid_params", 0.01],
  ["tau", "session.list", "ok", 0.025],
  ["codex", "turn/start", "ok", 1],
] as const;

/** Series lines in a stable order: the order of series in an exposition carries no meaning. */
const lines = (text: string) => text.split("\n").sort();

describe("CallTally", () => {
  for (const contentType of [Registry.PROMETHEUS_CONTENT_TYPE, Registry.OPENMETRICS_CONTENT_TYPE]) {
    it(`exposes what prom-client's own metrics expose for the same calls (${contentType.split(";")[0]})`, async () => {
      const own = new Registry<RegistryContentType>();
      const tallied = new Registry<RegistryContentType>();
      own.setContentType(contentType);
      tallied.setContentType(contentType);
      const counter = new Counter({
        name: "tau_gateway_requests_total",
        help: "Client requests answered, by dialect (ask, tau, codex, acp), method and outcome (ok or the error code's name).",
        labelNames: ["dialect", "method", "outcome"],
        registers: [own],
      });
      const histogram = new Histogram({
        name: "tau_gateway_request_duration_seconds",
        help: "Time from a client request to its answer, by dialect and method.",
        labelNames: ["dialect", "method"],
        buckets: BOUNDS,
        registers: [own],
      });
      const tally = new CallTally(BOUNDS);
      tally.requestsCounter([tallied]);
      tally.durationsHistogram([tallied]);
      for (const [dialect, method, outcome, seconds] of CALLS) {
        counter.inc({ dialect, method, outcome });
        histogram.observe({ dialect, method }, seconds);
        tally.record({ dialect, method, outcome, seconds });
      }
      const text = await tallied.metrics();
      expect(text).toContain('tau_gateway_request_duration_seconds_bucket{le="0.005",dialect="tau",method="session.list"} 2');
      expect(lines(text)).toEqual(lines(await own.metrics()));
    });
  }
});
