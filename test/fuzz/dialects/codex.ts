import { nextMessage } from "../infra/channel-wait.js";
import type { MessageChannel } from "../infra/message-channel.js";
import type { StreamDialect } from "../stream-target.js";
import { checkEveryMessage, jsonRpcDialect, jsonRpcNotify, jsonRpcResult, type JsonRpcPeer } from "./json-rpc.js";

/**
 * The Codex app-server dialect (v2), as a client on WebSocket `/` or `tau-gateway app-server`
 * sends it: no "jsonrpc" member written, no batches, and no answer at all to a message that names
 * no usable id (Codex clients drop the connection on a response they cannot match).
 */

const CODEX: JsonRpcPeer = { dialect: "codex", jsonrpcMember: "omit" };

/** Turns are where the bridge does most; interrupt and steer only mean something while one runs. */
const CODEX_METHOD_WEIGHTS: Record<string, number> = { "turn/start": 6, "turn/steer": 2, "turn/interrupt": 2, "thread/read": 2 };

/** initialize (with the experimental API, so its methods and fields are reachable) and initialized. */
async function initialize(channel: MessageChannel): Promise<void> {
  await jsonRpcResult(CODEX, channel, "initialize", { clientInfo: { name: "tau-gateway-fuzz", version: "1" }, capabilities: { experimentalApi: true } }, 60_000);
  jsonRpcNotify(channel, "initialized");
}

async function startThread(channel: MessageChannel, cwd: string): Promise<string> {
  const { thread } = await jsonRpcResult(CODEX, channel, "thread/start", { cwd });
  return thread.id as string;
}

/** initialize → thread/start → turn/start → turn/completed (completed), with every message checked. */
async function codexNormalSession(channel: MessageChannel, cwd: string): Promise<void> {
  const problems = checkEveryMessage(CODEX, channel);
  let invalid: string[] = [];
  try {
    const threadId = await startThread(channel, cwd);
    const completed = nextMessage(channel, (m) => m?.method === "turn/completed" && m.params?.threadId === threadId, "turn/completed", 30_000);
    await jsonRpcResult(CODEX, channel, "turn/start", { threadId, input: [{ type: "text", text: "hello after fuzzing", text_elements: [] }] });
    const { params } = await completed;
    if (params.turn?.status !== "completed") throw new Error(`the turn ended with ${JSON.stringify(params.turn)}`);
  } finally {
    invalid = problems();
  }
  if (invalid.length) throw new Error(`a normal session saw invalid messages:\n${invalid.join("\n")}`);
}

export function codexDialect(): StreamDialect {
  return jsonRpcDialect({
    ...CODEX,
    framing: { maxBatch: false, unidentifiable: "drop" },
    weights: CODEX_METHOD_WEIGHTS,
    sentinel: { method: "configRequirements/read" },
    handshake: initialize,
    prepare: async (channel, cwd) => ({ sessionId: await startThread(channel, cwd), cwd }),
    stillUsable: (channel, live) =>
      jsonRpcResult(CODEX, channel, "thread/read", { threadId: live.sessionId }).then(
        () => true,
        () => false,
      ),
    // The normal session's connection is a fresh one, handshaken by the runner.
    normalSession: codexNormalSession,
  });
}
