import type { LineLog } from "../shared/log.js";

/** Options of the embedded Tau host (the contract of `startTauHost`). */
export interface TauHostOptions {
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 8787; 0 = any free port. */
  port?: number;
  /** Compared to the `?tau_token=` query parameter; absent = unauthenticated. */
  authToken?: string;
  /** Persist sessions here (JSON files); absent = in memory. */
  stateDir?: string;
  /** Pause between streamed chunks of the scripted agent; default 0. */
  streamDelayMs?: number;
  /** Default 5000. */
  clientToolAckDeadlineMs?: number;
  /** Default 60000 (a tool's own executionTimeoutMs overrides it). */
  clientToolExecutionDeadlineMs?: number;
  /**
   * Check every outgoing message (and every delta as it is made) against the schema; a violation
   * is logged, printed and thrown, and the connection that would have received it is closed.
   * Default: on when NODE_ENV is "development" or "test".
   */
  validateOutgoing?: boolean;
  /** Diagnostics; default: nothing. */
  log?: LineLog;
}

export interface ResolvedHostOptions {
  host: string;
  port: number;
  authToken: string | undefined;
  stateDir: string | undefined;
  streamDelayMs: number;
  clientToolAckDeadlineMs: number;
  clientToolExecutionDeadlineMs: number;
  validateOutgoing: boolean;
  log: LineLog;
}

export function resolveHostOptions(options: TauHostOptions = {}): ResolvedHostOptions {
  const env = process.env.NODE_ENV;
  return {
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 8787,
    authToken: options.authToken === "" ? undefined : options.authToken,
    stateDir: options.stateDir,
    streamDelayMs: Math.max(0, options.streamDelayMs ?? 0),
    clientToolAckDeadlineMs: options.clientToolAckDeadlineMs ?? 5000,
    clientToolExecutionDeadlineMs: options.clientToolExecutionDeadlineMs ?? 60000,
    validateOutgoing: options.validateOutgoing ?? (env === "development" || env === "test"),
    log: options.log ?? (() => {}),
  };
}
