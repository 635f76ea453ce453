import type { ApprovalPolicy, CommandToolConfig } from "../../src/bridge/interactions/index.js";
import { ECHO_TOOL } from "./echo-tool.js";
import { buildGateway } from "../../src/gateway/app.js";
import type { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { InspectorHub } from "../../src/gateway/inspector/inspector-hub.js";
import { RawAcpClient } from "./acp-raw-client.js";
import { AskTestClient, rpcError } from "./ask-client.js";
import { openSession, runTurn } from "./ask-events.js";
import { CodexTestClient } from "./codex-client.js";
import { listenOnEmbeddedStack, type EmbeddedStackGateway } from "./gateway.js";

/**
 * A gateway as `tau-gateway serve --inspector` puts it together (embedded host, bridge stack,
 * Ask `/rpc`, Codex `/`, ACP `/acp`, the inspector at `/inspector`), on a free loopback port.
 */
export interface InspectorGateway extends EmbeddedStackGateway {
  hub: InspectorHub;
  wsUrl(path: string): string;
}

export async function startInspectorGateway(
  options: { tokens?: TokenRegistry; inspector?: boolean; hosts?: string[]; commandTools?: CommandToolConfig[]; approvalPolicy?: ApprovalPolicy } = {},
): Promise<InspectorGateway> {
  const hub = new InspectorHub();
  const gateway = await listenOnEmbeddedStack({ cwdPrefix: "inspector-gateway-", eventRetention: 1000, commandTools: options.commandTools, approvalPolicy: options.approvalPolicy }, (stack) =>
    buildGateway({
      tauUpstream: { url: stack.url! },
      upstream: stack.upstream!,
      dialects: stack.gatewayDialects({ jsonrpcMember: "include" }),
      tokens: options.tokens,
      inspector: options.inspector === false ? undefined : { hub, listenHost: "127.0.0.1", hosts: options.hosts, sessions: stack.core!.sessions, receipts: stack.receipts },
    }),
  );
  return { ...gateway, hub, wsUrl: (path) => `${gateway.baseUrl.replace("http://", "ws://")}${path}` };
}

/**
 * Traffic for the inspector to show, over real WebSockets: an Ask turn on `/rpc`, a Codex turn on
 * `/`, and one Codex request whose params break the schema (`input` is not a list).
 */
export async function driveTraffic(gw: InspectorGateway, cleanups: { push(fn: () => unknown): void }) {
  const ask = await AskTestClient.websocket(gw.wsUrl("/rpc"));
  cleanups.push(() => ask.socket.close());
  const sessionId = await openSession(ask);
  const askTurn = await runTurn(ask, sessionId, "hello from ask");

  const codex = await CodexTestClient.websocket(gw.wsUrl("/"));
  cleanups.push(() => codex.socket.close());
  await codex.initialize();
  const { thread } = await codex.request("thread/start", { cwd: gw.cwd });
  const codexTurn = await codex.turn(thread.id, "hello from codex");
  await rpcError(codex.request("turn/start", { threadId: thread.id, input: "not a list" }));
  return { sessionId, askTurnId: askTurn.sent.turnId as string, threadId: thread.id as string, codexTurnId: codexTurn.turnId };
}

/** The command tool the shared-session traffic calls: it prints its JSON arguments once approved. */
export { ECHO_TOOL };

/**
 * One session used by an Ask client and a Codex client at once, both of which would be asked about
 * approvals and neither of which answers (the operator is to): the Ask client creates the session
 * and subscribes, the Codex client resumes it as a thread. `turn` runs an Ask turn to its end;
 * `callTool` starts a turn that calls ECHO_TOOL and resolves once both clients were asked.
 */
export async function sharedSession(gw: InspectorGateway, cleanups: { push(fn: () => unknown): void }, options: { acp?: boolean } = {}) {
  const ask = await AskTestClient.websocket(gw.wsUrl("/rpc"));
  cleanups.push(() => ask.socket.close());
  const askAsked: string[] = [];
  ask.reverse = (method, params) => {
    askAsked.push(`${method} ${String(params.interactionId)}`);
    return new Promise(() => undefined); // the person at this client never answers
  };
  const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });

  const codex = await CodexTestClient.websocket(gw.wsUrl("/"));
  cleanups.push(() => codex.socket.close());
  await codex.initialize();
  await codex.request("thread/resume", { threadId: sessionId });
  codex.onRequest("item/commandExecution/requestApproval", () => new Promise(() => undefined));

  // With `acp`: an editor has the session loaded too, and leaves its permission requests unanswered.
  let acp: RawAcpClient | undefined;
  if (options.acp) {
    acp = await RawAcpClient.connect(gw.wsUrl("/acp"));
    cleanups.push(() => acp!.close());
    acp.answer = () => undefined;
    await acp.initialize();
    await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
  }

  return {
    ask,
    codex,
    acp,
    sessionId,
    askAsked,
    turn: (text: string) => runTurn(ask, sessionId, text),
    async callTool(a: number) {
      const sent = await ask.request("session/send", { sessionId, content: `/tool ${ECHO_TOOL.name} {"a":${a}}\nDone` });
      await ask.waitFor(() => askAsked.length > 0, "the Ask client to be asked");
      await codex.waitFor((m) => m.method === "item/commandExecution/requestApproval");
      await acp?.next((m) => m.method === "session/request_permission");
      return { turnId: sent.turnId as string };
    },
  };
}
