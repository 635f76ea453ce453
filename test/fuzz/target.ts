import type fc from "fast-check";
import type { FuzzUpstream } from "./infra/fuzz-upstream.js";
import type { GatewayProcess } from "./infra/gateway-process.js";
import type { FuzzSettings } from "./settings.js";

/**
 * One dialect on one transport, as the fuzz engine drives it. A file in targets/ default-exports
 * one; the engine finds them there, so a new dialect or transport plugs in with one file.
 */
export interface FuzzTarget {
  /** Shown in reports, e.g. "/tau (WebSocket)". */
  name: string;
  /** The protocol its cases speak, e.g. "tau" or "ask". */
  dialect: string;
  /** Starts the gateway process this transport needs, in front of `upstream`, ready for cases. */
  start(context: TargetContext): Promise<RunningTarget>;
  /** How many ordinary cases one of its cases costs (default 1): its share of the cases is divided by it. */
  caseCost?: number;
  /** Properties of the target as a whole, checked once after its cases. */
  properties?: RunProperty[];
}

export interface TargetContext {
  upstream: FuzzUpstream;
  settings: FuzzSettings;
}

export interface RunningTarget {
  gateway: GatewayProcess;
  /** http://HOST:PORT of a listening gateway (undefined for stdio commands). */
  baseUrl: string | undefined;
  /** The cases of this target (some generators depend on what start() set up). */
  cases: fc.Arbitrary<unknown>;
  describeCase(value: unknown): string;
  /** Sends one case and checks everything it got back; resolves with the problems (none: the case passed). */
  runCase(value: unknown): Promise<string[]>;
  /** A normal session in this dialect on this transport: create → send → turn completed. Throws if it does not work. */
  normalSession(): Promise<void>;
  /** Closes what fuzzing left open (its client connections), before memory is measured. */
  quiesce(): Promise<void>;
  readonly stats: TargetStats;
  stop(): Promise<void>;
}

export interface TargetStats {
  cases: number;
  /** Messages (and batch elements) sent. */
  requests: number;
  /** Responses received. */
  responses: number;
  /** Error responses by code (and HTTP statuses, as "HTTP 4xx"). */
  errors: Map<string, number>;
  /** The first error message seen for each code, for triage. */
  errorSamples: Map<string, string>;
}

export const newStats = (): TargetStats => ({ cases: 0, requests: 0, responses: 0, errors: new Map(), errorSamples: new Map() });

export function countError(stats: TargetStats, code: string, times = 1, sample?: string): void {
  stats.errors.set(code, (stats.errors.get(code) ?? 0) + times);
  if (sample !== undefined && !stats.errorSamples.has(code)) stats.errorSamples.set(code, sample.slice(0, 500));
}

/**
 * A property no single case can show (a flood, a signal, what the log or the upstream saw over the
 * whole run): checked once, after the cases.
 */
export interface RunProperty {
  /** What it checks, in a few words. */
  checks: string;
  /** Runs on the started target after its cases; resolves with the problems found. */
  run(target: RunningTarget, context: TargetContext): Promise<string[]>;
}
