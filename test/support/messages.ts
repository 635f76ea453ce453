/** Small builders for protocol messages used across suites. */

/** The 30 Tau v18 methods, in the order of the spec (which `ready` advertises). */
export const TAU_V18_METHODS = [
  "initialize", "session.create", "session.list", "session.observe", "session.unobserve",
  "session.record", "session.submit", "session.queue", "session.steer",
  "session.cancelPendingMessages", "session.retry", "session.exec", "session.cancelExec",
  "session.sample", "session.interrupt", "session.snapshot", "session.setReasoning",
  "session.setAutoCompactThreshold", "session.setPersona", "session.resolvePrompt",
  "session.autocompletePaths", "session.reload", "session.compact", "session.rewind",
  "session.interruptSubagent", "session.ephemeral.create", "session.ephemeral.submit",
  "session.ephemeral.close", "session.clientTool.ack", "session.clientTool.result",
];

export const tauRequest = (method: string, params: unknown, id: unknown = "req-1", version: unknown = 18) => ({
  version,
  type: "request",
  id,
  method,
  params,
});

export const localEnv = (extra: Record<string, unknown> = {}) => ({ kind: "local", cwd: "/tmp", ...extra });

export const createParams = (extra: Record<string, unknown> = {}) => ({
  executionEnvironment: localEnv(),
  attributes: {},
  ...extra,
});

export const askRequest = (method: string, params?: unknown, id: string | number = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

export const askEvent = (type: string, payload: unknown, seq = 2) => ({
  jsonrpc: "2.0",
  method: "session/event",
  params: { event: { type, seq, payload } },
});

export const png1x1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
