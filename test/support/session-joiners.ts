import { expect } from "vitest";
import { RawAcpClient } from "./acp-raw-client.js";
import type { TestGateway } from "./gateway.js";

/**
 * Clients of the other dialects joining a session an Ask client opened: a Codex client that has
 * resumed its thread, an editor that has loaded it (the load answered without an error).
 */

export async function codexOnSession(gw: TestGateway, sessionId: string) {
  const codex = await gw.codexClient();
  await codex.initialize();
  await codex.request("thread/resume", { threadId: sessionId });
  return codex;
}

export async function editorOnSession(gw: TestGateway, sessionId: string): Promise<RawAcpClient> {
  const acp = await RawAcpClient.connect(gw.acpUrl);
  await acp.initialize();
  expect((await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
  return acp;
}
