import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AskTestClient } from "./ask-client.js";
import type { Cleanups } from "./cleanups.js";
import type { Event } from "../../generated/ask-v1.0.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
import { readyServe } from "./relayed-clients.js";
import { snapshotOnHost, userTexts } from "./tau-client.js";

/**
 * A gateway for the relays' network-fault tests: `serve` with a command tool that asks for
 * approval (`echo-args`, which prints its JSON arguments), reached by the relays through a loopback
 * TCP proxy whose connections a test can cut (tcp-proxy.ts), and watched directly (not through
 * the proxy) by an Ask client, which sees what the session really did.
 */
export interface FaultyLink {
  /** The gateway's base URL through the proxy: what the relays are given. */
  remote: string;
  proxy: TcpProxy;
  cwd: string;
  /** An Ask client on the gateway's own port, subscribed to `sessionId` from its start. */
  observe(sessionId: string): Promise<AskTestClient>;
  /** The text of each user message of the session, as the Tau host has them (read through the gateway's /tau). */
  userMessages(sessionId: string): Promise<string[]>;
}

/** `serveArgs`: more of serve's options (`--upstream` a host of the test's own, with a stream delay). */
export async function gatewayBehindProxy(cleanups: Cleanups, serveArgs: string[] = []): Promise<FaultyLink> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-relay-faults-")));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const tools = join(cwd, "tools.json");
  writeFileSync(tools, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its JSON arguments.", parameters: { type: "object" }, command: "cat" }] }));
  const gateway = await readyServe(["--port", "0", "--log-level", "warn", "--default-cwd", cwd, "--tools-config", tools, ...serveArgs], cleanups);
  const { port } = new URL(gateway.baseUrl);
  const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(port) }, cleanups);
  return {
    remote: `ws://127.0.0.1:${proxy.port}`,
    proxy,
    cwd,
    userMessages: async (sessionId) => userTexts(await snapshotOnHost(`${gateway.baseUrl.replace("http://", "ws://")}/tau`, sessionId)),
    async observe(sessionId) {
      const observer = await AskTestClient.websocket(`${gateway.baseUrl.replace("http://", "ws://")}/rpc`);
      cleanups.push(() => observer.socket.terminate());
      await observer.request("initialize", { client: { name: "observer", version: "1" } });
      await observer.request("session/subscribe", { sessionId, afterSeq: 0 });
      return observer;
    },
  };
}

/** How the session's (only) approval ended and what its tool gave, as the gateway's log has them. */
export async function approvalOutcome(observer: AskTestClient, sessionId: string): Promise<{ status: unknown; output: unknown; isError: unknown }> {
  const result = (await observer.waitForEvent(sessionId, "tool.result", "the tool's result")) as Event & { payload: { output: unknown; isError: unknown } };
  const updated = observer.eventsOf(sessionId).find((e) => e.type === "approval.updated") as (Event & { payload: { status: unknown } }) | undefined;
  return { status: updated?.payload.status, output: result.payload.output, isError: result.payload.isError };
}

/** The text of every streamed chunk of a session's log (Ask `model.streaming`), in order. */
export const streamedText = (observer: AskTestClient, sessionId: string): string =>
  observer
    .eventsOf(sessionId)
    .filter((e) => e.type === "model.streaming")
    .map((e) => (e.payload as { delta: string }).delta)
    .join("");
