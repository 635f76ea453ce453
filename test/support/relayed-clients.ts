import { spawnAcpAgent, type AgentProcess } from "./acp-process.js";
import type { Cleanups } from "./cleanups.js";
import { AskTestClient } from "./ask-client.js";
import { serveCli } from "./cli.js";
import { CodexTestClient } from "./codex-client.js";
import { spawnLineChild } from "./line-child.js";
import { until } from "./replica-set.js";

/** `tau-gateway serve ARGS`, resolved once its /readyz answers 200: how the relay tests start (and restart) the gateway behind the relays. */
export async function readyServe(args: string[], cleanups: Cleanups): Promise<Awaited<ReturnType<typeof serveCli>>> {
  const gateway = await serveCli(args, cleanups);
  await until(async () => (await fetch(`${gateway.baseUrl}/readyz`)).status === 200 || undefined, "the gateway to be ready");
  return gateway;
}

/** An Ask terminal through `tau-gateway stdio --remote URL`. */
export function askThroughRelay(remote: string, cleanups: Cleanups): { terminal: AskTestClient; relay: ReturnType<typeof spawnLineChild> } {
  let terminal!: AskTestClient;
  const relay = spawnLineChild(["stdio", "--remote", remote], cleanups, (line) => terminal.receive(line));
  terminal = new AskTestClient(relay.write);
  return { terminal, relay };
}

/** A Codex client through `tau-gateway app-server --remote URL`, initialized. */
export async function codexThroughRelay(remote: string, cleanups: Cleanups): Promise<{ codex: CodexTestClient; relay: ReturnType<typeof spawnLineChild> }> {
  let codex!: CodexTestClient;
  const relay = spawnLineChild(["app-server", "--remote", remote], cleanups, (line) => codex.receive(line));
  codex = new CodexTestClient(relay.write);
  await codex.initialize();
  return { codex, relay };
}

/** An editor through `tau-gateway acp --remote URL`, initialized, with `sessionId` loaded (requests 1 and 2). */
export async function editorThroughRelay(remote: string, sessionId: string, cwd: string, cleanups: Cleanups): Promise<AgentProcess> {
  const editor = spawnAcpAgent(["--remote", remote], cleanups);
  editor.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await editor.next((m) => m.id === 1);
  editor.write({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd, mcpServers: [] } });
  await editor.next((m) => m.id === 2);
  return editor;
}
