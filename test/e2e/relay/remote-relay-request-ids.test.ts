import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { spawnLineChild } from "../../support/line-child.js";
import { approvalOutcome, gatewayBehindProxy } from "../../support/relay-faults.js";

/**
 * The gateway's requests to a relayed client (approvals) reach it under ids of the relay's own.
 * The relay's link is cut (a loopback proxy resets it) between the ask and the answer: the relay
 * withdraws the prompt, reconnects, and the gateway asks again. The re-asked approval is a new
 * request with a new id, and the client's late answer to the withdrawn one — ACP's prescribed
 * `cancelled` reply, or a refusal — decides nothing: the answer to the new request does.
 */

const cleanups = cleanupsAfterEach();
const TIMEOUT = 90_000;
const CALL = '/tool echo-args {"a":1}';

describe("a relay's own ids for the gateway's requests, across a reconnect", () => {
  it(
    "acp --remote: the cancelled reply to the withdrawn permission request is stale; the new request, under a new id, decides",
    async () => {
      const link = await gatewayBehindProxy(cleanups);
      const agent = spawnAcpAgent(["--remote", link.remote], cleanups);
      agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await agent.next((m) => m.id === 1);
      agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: link.cwd, mcpServers: [] } });
      const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
      const observer = await link.observe(sessionId);

      agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: CALL }] } });
      const first = await agent.next((m) => m.method === "session/request_permission" && "id" in m);
      link.proxy.drop();
      expect(await agent.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: first.id } });
      const again = await agent.next((m) => m.method === "session/request_permission" && "id" in m && m.id !== first.id);
      expect(again.params.toolCall.rawInput).toEqual({ a: 1 });

      // ACP's answer to a cancelled request, late; then the answer to the new one.
      agent.write({ jsonrpc: "2.0", id: first.id, result: { outcome: { outcome: "cancelled" } } });
      const allow = again.params.options.find((o: { kind: string }) => o.kind === "allow_once").optionId;
      agent.write({ jsonrpc: "2.0", id: again.id, result: { outcome: { outcome: "selected", optionId: allow } } });
      expect(await approvalOutcome(observer, sessionId)).toEqual({ status: "approved", output: '{"a":1}', isError: false });

      agent.closeInput();
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "app-server --remote: a late decline of the withdrawn approval is stale; the approval asked again has a new id and is accepted",
    async () => {
      const link = await gatewayBehindProxy(cleanups);
      let codex!: CodexTestClient;
      const relay = spawnLineChild(["app-server", "--remote", link.remote], cleanups, (line) => codex.receive(line));
      codex = new CodexTestClient(relay.write);
      await codex.initialize();
      const { thread } = await codex.request("thread/start", { cwd: link.cwd, approvalPolicy: "on-request" });
      const observer = await link.observe(thread.id);
      await codex.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: CALL, text_elements: [] }] });
      const first = await codex.waitFor((m) => m.method === "item/commandExecution/requestApproval" && "id" in m);

      link.proxy.drop();
      expect(await codex.waitFor((m) => m.method === "serverRequest/resolved")).toEqual({ method: "serverRequest/resolved", params: { threadId: thread.id, requestId: first.id } });
      const again = await codex.waitFor((m) => m.method === "item/commandExecution/requestApproval" && "id" in m && m.id !== first.id);

      codex.send({ id: first.id, result: { decision: "decline" } });
      codex.send({ id: again.id, result: { decision: "accept" } });
      expect(await approvalOutcome(observer, thread.id)).toEqual({ status: "approved", output: '{"a":1}', isError: false });
      // The gateway settles the request it asked again, named as the client knows it.
      expect(await codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === again.id)).toBeDefined();

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(codex.invalid).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "stdio --remote: a late refusal of the permission request of the lost link is stale; the one asked again, under a new id, decides",
    async () => {
      const link = await gatewayBehindProxy(cleanups);
      let terminal!: AskTestClient;
      const relay = spawnLineChild(["stdio", "--remote", link.remote], cleanups, (line) => terminal.receive(line));
      terminal = new AskTestClient(relay.write);
      await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" }, capabilities: ["reverseRequests"] });
      const { session } = await terminal.request("session/create", {});
      const sessionId = session.sessionId as string;
      await terminal.request("session/subscribe", { sessionId });
      const observer = await link.observe(sessionId);
      const asked = () => terminal.received.filter((m: any) => m.method === "interaction/requestPermission" && "id" in m) as Array<{ id: number }>;

      await terminal.request("session/send", { sessionId, content: CALL });
      await terminal.waitFor(() => asked().length === 1, "the permission request");
      const first = asked()[0]!;
      link.proxy.drop();
      await terminal.waitFor(() => asked().length === 2, "the permission request asked again");
      const again = asked()[1]!;
      expect(again.id).not.toBe(first.id);

      terminal.send({ id: first.id, result: { decision: "deny" } });
      terminal.send({ id: again.id, result: { decision: "allow" } });
      expect(await approvalOutcome(observer, sessionId)).toEqual({ status: "approved", output: '{"a":1}', isError: false });

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(terminal.invalid).toEqual([]);
    },
    TIMEOUT,
  );
});
