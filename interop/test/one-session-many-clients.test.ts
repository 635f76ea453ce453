import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { AskTestClient } from "../../test/support/ask-client.js";
import { expectContiguous, payloadsOf, terminalOf, waitForTerminal } from "../../test/support/ask-events.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { interopRun, type InteropRun } from "./support/gateway-process.js";
import { oneGateway, twoReplicas, type Topology } from "./support/gateway-servers.js";
import { RelayedEditor } from "./support/relayed-editor.js";

/**
 * One Tau session worked at once by three real clients, as a person with a laptop, an editor and
 * a phone works it: the Codex terminal UI (under tmux, on the gateway's WebSocket `/`), an editor
 * (the official ACP SDK through `tau-gateway acp --remote`, as Zed spawns it) and a phone (an Ask
 * client on WebSocket `/rpc`). A turn is started from each and all three see it; an approval is
 * asked of all three and decided once, the others' prompts withdrawn in their own words (the
 * terminal's dialog closes, the editor gets `$/cancel_request`, the phone `approval.updated`);
 * each client drops mid-turn and comes back, and finds the session where it is. Once on one
 * `serve` gateway, once on two replicas sharing a Redis store, the clients spread over both.
 * Skipped without tmux; the replicas also need redis-server.
 */

const TOKEN = "shared-session-token-81f3";
const EDIT_TOOL = (n: number) => `/tool echo-args {"n":${n}}`;
const DIALOG = "Would you like to run the following command?";

/** A phone: an Ask client on the gateway's /rpc, with the token; it watches events and decides with interaction/approve. */
async function phoneOn(url: string): Promise<AskTestClient & { socket: import("ws").WebSocket }> {
  const phone = await AskTestClient.websocket(`${url}/rpc`, { headers: { authorization: `Bearer ${TOKEN}` } });
  phone.socket.on("error", () => undefined);
  await phone.request("initialize", { client: { name: "phone", version: "1" } });
  return phone;
}

const turnIdOf = (event: Event) => (event.payload as { turnId: string }).turnId;
const approvalsOf = (events: readonly Event[]) => payloadsOf<{ id: string; status: string }>(events, "approval.updated");

function sharedSession(name: string, start: (env: Record<string, string>) => Promise<Topology>, skip: boolean) {
  describe.skipIf(skip)(name, () => {
    let run: InteropRun;
    let at: Topology;
    let tui: CodexTui;
    let editor: RelayedEditor;
    let phone: AskTestClient & { socket: import("ws").WebSocket };
    let sessionId: string;
    const home = () => join(run.cwd, "..", "home");

    beforeAll(async () => {
      run = interopRun();
      at = await start({ ...run.env, TAU_GATEWAY_TOKEN: TOKEN });
      tui = CodexTui.start({ cwd: run.cwd, home: home(), url: at.tui, token: TOKEN });
      await tui.shows("Ask Codex to do anything");
    }, 240_000);

    afterAll(async () => {
      tui?.kill();
      phone?.socket.terminate();
      await editor?.drop();
      await at?.stop();
      run?.cleanup();
    });

    /** The phone's events of the session. */
    const seen = () => phone.eventsOf(sessionId);
    const turnsStarted = () => seen().filter((e) => e.type === "turn.started");
    /** Resolves with the id of the next turn to start after `count` turns had started. */
    const nextTurn = async (count: number): Promise<string> => {
      await phone.waitFor(() => turnsStarted().length > count, "the next turn to start", 60_000);
      return turnIdOf(turnsStarted()[count]!);
    };

    it("starts a turn from each client, and every client sees every turn", async () => {
      // The terminal starts the session with its first turn.
      await tui.send(["Hello from the terminal"]);
      await tui.shows("You said: Hello from the terminal");
      // Once the turn is over: a line entered while it runs would be sent to it.
      await tui.shows("Worked for");
      sessionId = await tui.threadId();

      // The phone opens it and is given its history; the editor loads it the same way.
      phone = await phoneOn(at.phone);
      await phone.request("session/subscribe", { sessionId });
      await phone.waitFor(() => seen().some((e) => e.type === "turn.completed"), "the terminal's turn in the history");
      editor = await RelayedEditor.connect(at.editor, TOKEN);
      await editor.agent.request("session/load", { sessionId, cwd: run.cwd, mcpServers: [] });
      expect(editor.agentText(sessionId)).toContain("You said: Hello from the terminal");

      // A turn from the phone: the terminal shows it, the editor streams it.
      const fromPhone = await phone.request("session/send", { sessionId, content: "Hello from the phone" });
      expect(await waitForTerminal(phone, sessionId, fromPhone.turnId)).toMatchObject({ type: "turn.completed", payload: { response: "You said: Hello from the phone" } });
      await tui.shows("You said: Hello from the phone");
      await editor.waitFor(() => editor.agentText(sessionId).includes("You said: Hello from the phone"), "the phone's turn");

      // A turn from the editor: answered end_turn; the phone and the terminal see it.
      const answer = await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hello from the editor" }] });
      expect(answer.stopReason).toBe("end_turn");
      expect(editor.agentText(sessionId)).toContain("You said: Hello from the editor");
      await phone.waitFor(() => payloadsOf<{ response?: string }>(seen(), "turn.completed").some((p) => p.response === "You said: Hello from the editor"), "the editor's turn");
      await tui.shows("You said: Hello from the editor");

      // The terminal's own turn reached the others too.
      expect(payloadsOf<{ response?: string }>(seen(), "turn.completed").map((p) => p.response)).toEqual([
        "You said: Hello from the terminal",
        "You said: Hello from the phone",
        "You said: Hello from the editor",
      ]);
      expect(phone.invalid).toEqual([]);
    });

    it("asks an approval of all three; the phone decides it, the terminal's dialog closes and the editor's request is withdrawn", async () => {
      const prompted = editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `${EDIT_TOOL(1)}\nRun it from the editor` }] });
      const asked = editor.permissions.length;
      await tui.shows(DIALOG);
      await editor.waitFor(() => editor.permissions.length === asked + 1, "the permission request");
      const required = await phone.waitForEvent(sessionId, "approval.required");
      const interactionId = (required.payload as { id: string }).id;

      await phone.request("interaction/approve", { sessionId, interactionId });
      await phone.waitFor(() => approvalsOf(seen()).some((a) => a.id === interactionId), "the phone's decision");
      expect(approvalsOf(seen()).filter((a) => a.id === interactionId)).toEqual([{ id: interactionId, status: "approved" }]);
      const permission = editor.permissions[asked]!;
      await permission.withdrawn;
      expect(editor.fromAgent).toContainEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: permission.requestId } });
      const screen = await tui.shows('Tool echo-args returned: {"n":1}');
      expect(screen).not.toContain(DIALOG);
      expect((await prompted).stopReason).toBe("end_turn");
      expect(editor.agentText(sessionId)).toContain('Tool echo-args returned: {"n":1}');
    });

    it("asks an approval of all three; the terminal decides it, the phone is told and the editor's request is withdrawn", async () => {
      const asked = editor.permissions.length;
      const required = payloadsOf(seen(), "approval.required").length;
      const sent = await phone.request("session/send", { sessionId, content: `Run it from the phone\n${EDIT_TOOL(2)}` });
      await tui.shows(DIALOG);
      await editor.waitFor(() => editor.permissions.length === asked + 1, "the permission request");
      await phone.waitFor(() => payloadsOf(seen(), "approval.required").length === required + 1, "the phone's approval.required");
      const interactionId = payloadsOf<{ id: string }>(seen(), "approval.required").at(-1)!.id;

      await tui.answer(DIALOG, "y");
      await phone.waitFor(() => approvalsOf(seen()).some((a) => a.id === interactionId), "the terminal's decision");
      expect(approvalsOf(seen()).filter((a) => a.id === interactionId)).toEqual([{ id: interactionId, status: "approved" }]);
      const permission = editor.permissions[asked]!;
      await permission.withdrawn;
      expect(editor.fromAgent).toContainEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: permission.requestId } });
      expect(await waitForTerminal(phone, sessionId, sent.turnId)).toMatchObject({ type: "turn.completed", payload: { response: 'You said: Run it from the phone\nTool echo-args returned: {"n":2}' } });
      await tui.shows('Tool echo-args returned: {"n":2}');
    });

    it("lets the phone drop mid-turn and come back where it left off", async () => {
      const count = turnsStarted().length;
      await tui.send(["Take your time", "/sleep 4000"]);
      const turnId = await nextTurn(count);
      const before = seen();
      phone.socket.terminate();

      phone = await phoneOn(at.phoneAgain);
      await phone.request("session/subscribe", { sessionId, afterSeq: before.at(-1)!.seq });
      expect(await waitForTerminal(phone, sessionId, turnId)).toMatchObject({ type: "turn.completed", payload: { response: "You said: Take your time" } });
      // Nothing lost, nothing twice: the new stream continues the old one seq for seq.
      expectContiguous([...before, ...seen()], before[0]!.seq);
      await tui.shows("You said: Take your time");
      expect(phone.invalid).toEqual([]);
    });

    it("keeps the editor's turn running when the editor drops, and streams it to the editor when it comes back", async () => {
      // Longer than any grace a dropped connection might get: the turn belongs to the session.
      const count = turnsStarted().length;
      void editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/sleep 14000\nStill here" }] }).catch(() => undefined);
      const turnId = await nextTurn(count);
      await editor.drop();

      editor = await RelayedEditor.connect(at.editorAgain, TOKEN);
      await editor.agent.request("session/load", { sessionId, cwd: run.cwd, mcpServers: [] });
      const end = await phone.waitFor(() => terminalOf(seen(), turnId) !== undefined, "the editor's turn to end", 60_000).then(() => terminalOf(seen(), turnId)!);
      expect(end).toMatchObject({ type: "turn.completed", payload: { response: "You said: Still here" } });
      await editor.waitFor(() => editor.agentText(sessionId).includes("You said: Still here"), "the turn's answer on the new connection");
      await tui.shows("You said: Still here");
    });

    it("keeps an approval pending when the terminal drops, and asks the terminal again when it resumes the thread", async () => {
      const asked = editor.permissions.length;
      const required = payloadsOf(seen(), "approval.required").length;
      const sent = await phone.request("session/send", { sessionId, content: `Run it while the terminal is away\n${EDIT_TOOL(3)}` });
      await tui.shows(DIALOG);
      await editor.waitFor(() => editor.permissions.length === asked + 1, "the permission request");
      await phone.waitFor(() => payloadsOf(seen(), "approval.required").length === required + 1, "the phone's approval.required");
      const interactionId = payloadsOf<{ id: string }>(seen(), "approval.required").at(-1)!.id;
      tui.kill();
      try {
        // Nobody decided: the approval is still pending for whoever is left or comes next.
        expect((await phone.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ id: interactionId, status: "pending" })]);
        expect(approvalsOf(seen()).filter((a) => a.id === interactionId)).toEqual([]);

        tui = CodexTui.start({ cwd: run.cwd, home: home(), url: at.tuiAgain, token: TOKEN, args: ["resume", sessionId] });
        // Within the approval's deadline (60 s), so that a failure here leaves it for the phone to decide.
        await tui.shows(DIALOG, 30_000);
        await tui.answer(DIALOG, "y");
        await phone.waitFor(() => approvalsOf(seen()).some((a) => a.id === interactionId), "the resumed terminal's decision");
        expect(approvalsOf(seen()).filter((a) => a.id === interactionId)).toEqual([{ id: interactionId, status: "approved" }]);
        await editor.permissions[asked]!.withdrawn;
      } finally {
        // Whatever failed above, the turn is not left waiting for the deadline.
        if (!approvalsOf(seen()).some((a) => a.id === interactionId)) await phone.request("interaction/approve", { sessionId, interactionId }).catch(() => undefined);
      }
      expect(await waitForTerminal(phone, sessionId, sent.turnId)).toMatchObject({
        type: "turn.completed",
        payload: { response: 'You said: Run it while the terminal is away\nTool echo-args returned: {"n":3}' },
      });
      await tui.shows('Tool echo-args returned: {"n":3}');
      expect(phone.invalid).toEqual([]);
    });
  });
}

const hasRedis = existsSync("/usr/bin/redis-server");

sharedSession("one session, three clients, one gateway", oneGateway, !hasTmux);
sharedSession("one session, three clients, two gateway replicas on Redis", twoReplicas, !hasTmux || !hasRedis);
