import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";
import { snapshotOnHost } from "../../support/tau-client.js";

/**
 * session/create with what Ask clients send: a model (the host's own test sends "gpt-4o", the Ruby
 * `ask --model M` sends M), tool names, a system prompt, a mode the gateway may not know, and a
 * working directory that is ".", relative or null. The session always starts with what Tau really
 * uses; the result reports the model, and a notice event names each value that was not applied.
 * Over stdio, WebSocket `/rpc` and the Unix socket.
 */

/** Creates a session and returns its id and its events (read with session/events). */
async function create(client: AskTestClient, params: Record<string, unknown>): Promise<{ sessionId: string; model: string; events: Event[] }> {
  const { session } = await client.request("session/create", params);
  const { events } = await client.request("session/events", { sessionId: session.sessionId });
  return { sessionId: session.sessionId, model: session.model, events };
}

const notices = (events: Event[]) => events.filter((e) => e.type === "notice").map((e) => e.payload as { severity: string; title: string; content: string[]; kind: string });

async function cwdOf(client: AskTestClient, sessionId: string): Promise<string> {
  return (await client.request("workspace/readState", { sessionId })).workspace.path;
}

describeOverAskTransports("session/create", { confineToDefaultCwd: true }, (transport) => {
  it('the host\'s own example: workspacePath "." and model "gpt-4o" start a session on Tau\'s model, with a notice saying so', async () => {
    const client = await transport().client();
    const { sessionId, model, events } = await create(client, { workspace: { workspacePath: "." }, model: "gpt-4o" });
    expect(model).toBe("scripted-1");
    expect(await cwdOf(client, sessionId)).toBe(transport().cwd);
    expect(events.map((e) => `${e.seq}:${e.type}`)).toEqual(["1:session.created", "2:notice"]);
    expect(notices(events)).toEqual([
      {
        severity: "warn",
        title: 'model "gpt-4o" not applied',
        content: [expect.stringContaining("tau-gateway/scripted-1")],
        kind: "tau-gateway.session-create.model",
      },
    ]);
    expect(client.invalid).toEqual([]);
  });

  it("the model Tau runs, with or without its provider prefix, is applied without a notice", async () => {
    const client = await transport().client();
    for (const model of ["scripted-1", "tau-gateway/scripted-1"]) {
      const created = await create(client, { model });
      expect(created.model).toBe("scripted-1");
      expect(created.events.map((e) => e.type), model).toEqual(["session.created"]);
    }
  });

  it("tools, systemPrompt and an unknown mode: accepted, each reported as not applied, Tau's own prompt left alone", async () => {
    const client = await transport().client();
    const { sessionId, events } = await create(client, { tools: ["bash", "read", "ask_user"], systemPrompt: "You are a pirate.", mode: "turbo" });
    expect(notices(events).map((n) => n.kind)).toEqual([
      "tau-gateway.session-create.mode",
      "tau-gateway.session-create.tools",
      "tau-gateway.session-create.systemPrompt",
    ]);
    expect(notices(events)[1]!.content[0]).toBe("Requested: bash, read, ask_user.");
    // The unknown mode fell back to the default: approvals required.
    expect((await client.request("workspace/readState", { sessionId })).workspace.mode).toBe("require");
    const snapshot = await snapshotOnHost(transport().hostUrl, sessionId);
    expect(JSON.stringify(snapshot.messages)).not.toContain("pirate");
    expect(client.invalid).toEqual([]);
  });

  it("an unknown tool is -32602 in the host's words and creates nothing", async () => {
    const client = await transport().client();
    const before = (await client.request("session/list", { limit: 1000 })).sessions.length;
    const error = await rpcError(client.request("session/create", { tools: ["read", "warp_drive"] }));
    expect([error.code, error.message]).toEqual([-32602, "-32602: Unknown tool: warp_drive"]);
    expect((await client.request("session/list", { limit: 1000 })).sessions).toHaveLength(before);
  });

  it("workspacePath relative, null, absent, or workspace null: resolved against the default working directory", async () => {
    const client = await transport().client();
    mkdirSync(join(transport().cwd, "sub", "deeper"), { recursive: true });
    for (const [workspace, expected] of [
      [{ workspacePath: "sub" }, join(transport().cwd, "sub")],
      [{ workspacePath: "./sub/deeper/.." }, join(transport().cwd, "sub")],
      [{ workspacePath: join(transport().cwd, "sub", "deeper") }, join(transport().cwd, "sub", "deeper")],
      [{ workspacePath: null }, transport().cwd],
      [{}, transport().cwd],
      [null, transport().cwd],
    ] as const) {
      const { sessionId, events } = await create(client, { workspace });
      expect(await cwdOf(client, sessionId), JSON.stringify(workspace)).toBe(expected);
      expect(notices(events)).toEqual([]);
    }
    // Tau got the absolute path.
    const { sessionId } = await create(client, { workspace: { workspacePath: "sub" } });
    expect((await snapshotOnHost(transport().hostUrl, sessionId)).executionEnvironment.cwd).toBe(join(transport().cwd, "sub"));
  });

  it("a workspacePath that does not exist is -32602 in Tau's words, the method named once, and creates nothing", async () => {
    // The Ask host would accept it; the gateway keeps Tau's refusal (docs/differences-ask-tau-notes.md).
    const client = await transport().client();
    const before = (await client.request("session/list", { limit: 1000 })).sessions.length;
    const missing = join(transport().cwd, "not-created-yet");
    const error = await rpcError(client.request("session/create", { workspace: { workspacePath: "not-created-yet" } }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`session.create params.executionEnvironment.cwd is not an existing directory: ${missing}`);
    expect(error.message.split("session.create").length - 1).toBe(1);
    expect((await client.request("session/list", { limit: 1000 })).sessions).toHaveLength(before);
  });

  it("a path leaving --workspace-root (here the default working directory) is -32602 and creates nothing", async () => {
    const client = await transport().client();
    const { cwd } = transport();
    const before = (await client.request("session/list", { limit: 1000 })).sessions.length;
    for (const workspacePath of ["..", "sub/../..", "/"]) {
      const error = await rpcError(client.request("session/create", { workspace: { workspacePath } }));
      expect([error.code, error.message], workspacePath).toEqual([-32602, expect.stringContaining("workspace.workspacePath")]);
      expect(error.message).toContain(`is outside the workspace roots (${cwd})`);
    }
    expect((await client.request("session/list", { limit: 1000 })).sessions).toHaveLength(before);
    const { sessionId } = await create(client, { workspace: { workspacePath: "." } });
    expect(await cwdOf(client, sessionId)).toBe(cwd);
  });
});
