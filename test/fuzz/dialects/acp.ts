import type { MessageChannel } from "../infra/message-channel.js";
import type { StreamDialect } from "../stream-target.js";
import { checkEveryMessage, jsonRpcDialect, jsonRpcResult, type JsonRpcPeer } from "./json-rpc.js";

/**
 * The Agent Client Protocol (v1), as an editor on WebSocket `/acp` or `tau-gateway acp` sends it:
 * "jsonrpc":"2.0" required on every message, no batches, a null-id error for what names no usable
 * id, every notification taken (an unknown one ignored).
 */

const ACP: JsonRpcPeer = { dialect: "acp" };

/** Prompts drive the turns; closing the shared session stays rare (the runner opens a new one now and then). */
const ACP_METHOD_WEIGHTS: Record<string, number> = { "session/prompt": 6, "session/cancel": 2, "session/close": 0.3 };

async function initialize(channel: MessageChannel): Promise<void> {
  await jsonRpcResult(ACP, channel, "initialize", { protocolVersion: 1, clientCapabilities: {} }, 60_000);
}

async function newSession(channel: MessageChannel, cwd: string): Promise<string> {
  const { sessionId } = await jsonRpcResult(ACP, channel, "session/new", { cwd, mcpServers: [] });
  return sessionId as string;
}

/** session/new → session/prompt → end_turn, with every message checked. */
async function acpNormalSession(channel: MessageChannel, cwd: string): Promise<void> {
  const problems = checkEveryMessage(ACP, channel);
  let invalid: string[] = [];
  try {
    const sessionId = await newSession(channel, cwd);
    const { stopReason } = await jsonRpcResult(ACP, channel, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hello after fuzzing" }] }, 30_000);
    if (stopReason !== "end_turn") throw new Error(`the prompt ended with ${stopReason}`);
  } finally {
    invalid = problems();
  }
  if (invalid.length) throw new Error(`a normal session saw invalid messages:\n${invalid.join("\n")}`);
}

export function acpDialect(): StreamDialect {
  return jsonRpcDialect({
    ...ACP,
    framing: { maxBatch: false, unidentifiable: "answer", jsonrpcRequired: true },
    weights: ACP_METHOD_WEIGHTS,
    // initialize may be repeated (protocol §1); it is answered by the gateway alone.
    sentinel: { method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
    handshake: initialize,
    prepare: async (channel, cwd) => ({ sessionId: await newSession(channel, cwd), cwd }),
    normalSession: acpNormalSession,
  });
}
