import { Counter, Gauge, type Registry } from "prom-client";
import type { AskSurfaceStats } from "../../../ask/ask-surface.js";

/** The Ask surface's own figures (events, snapshot fetches, resumes, pending interactions), read from it at scrape time. */
export function askSurfaceMetrics(surface: { readonly stats: AskSurfaceStats }, registers: Registry[]): void {
  new Counter({
    name: "tau_gateway_events_emitted_total",
    help: "Ask events appended to session event logs.",
    registers,
    collect() {
      this.reset();
      this.inc(surface.stats.eventsEmitted);
    },
  });
  new Counter({
    name: "tau_gateway_events_delivered_total",
    help: "Ask events sent to subscribed connections (one per event and subscriber).",
    registers,
    collect() {
      this.reset();
      this.inc(surface.stats.eventsDelivered);
    },
  });
  new Counter({
    name: "tau_gateway_session_snapshot_fetches_total",
    help: "session.snapshot requests the Ask surface sent upstream, by reason: resync (a delta did not apply) or list (session/list reading a session the gateway has not opened).",
    labelNames: ["reason"],
    registers,
    collect() {
      this.reset();
      const fetches = surface.stats.snapshotFetches;
      this.inc({ reason: "resync" }, fetches.resync);
      this.inc({ reason: "list" }, fetches.list);
    },
  });
  new Counter({
    name: "tau_gateway_resumes_total",
    help: "Subscriptions resuming after a cursor, by outcome: recovered (every event after it delivered) or reset (history lost: -32602 with the oldest seq, or the log's new epoch from its session.reset).",
    labelNames: ["outcome"],
    registers,
    collect() {
      this.reset();
      const { resumes } = surface.stats;
      this.inc({ outcome: "recovered" }, resumes.recovered);
      this.inc({ outcome: "reset" }, resumes.reset);
    },
  });
  new Gauge({
    name: "tau_gateway_pending_interactions",
    help: "Approvals and user-input requests waiting for an answer.",
    registers,
    collect() {
      this.set(surface.stats.pendingInteractions);
    },
  });
}
