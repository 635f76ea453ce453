/** Small builders for protocol messages used across suites. */

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
