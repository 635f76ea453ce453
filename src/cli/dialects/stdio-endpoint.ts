import type { CallGate } from "../../transports/jsonrpc-envelope.js";
import type { JsonRpcEndpoint, OpenEndpoint } from "../../transports/jsonrpc-endpoint.js";
import { serveNdjsonStdio, type StdioStopRule } from "../../transports/ndjson-endpoint.js";
import type { StdioRun } from "./descriptor.js";
import type { StdioSettingValues } from "./stdio-settings.js";

/**
 * A dialect's JSON-RPC endpoint on the command's stdin/stdout, with what the skeleton gives every
 * stdio command: one connection's gates, the drain time, the line bound, the stop and hurry
 * signals and the recording. The dialect brings how its endpoint opens and its stop rule;
 * `label` names it in the log line of a message its connection failed to handle.
 */
export async function serveStdioEndpoint<Endpoint extends JsonRpcEndpoint>(
  run: StdioRun<StdioSettingValues<Record<never, never>>>,
  label: string,
  open: (gate: CallGate) => OpenEndpoint<Endpoint>,
  rule: StdioStopRule<Endpoint>,
): Promise<number> {
  const { settings, log, io, recording, stop, hurry, gate } = run;
  await serveNdjsonStdio(io.stdin, process.stdout, open(gate()), {
    drainTimeoutMs: settings.drainTimeout,
    maxLineBytes: settings.maxMessageBytes,
    stop,
    hurry,
    recording,
    onError: (err) => log("error", `${label} connection failed to handle a message`, { err }),
    rule,
  });
  return 0;
}
