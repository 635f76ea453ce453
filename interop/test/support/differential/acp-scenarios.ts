import * as acp from "@agentclientprotocol/sdk";
import type { AcpScenario, AcpScenarioContext } from "./acp-run.js";

/**
 * The ACP scenario corpus, played by the ACP SDK as an editor: initialize, authenticate, session
 * new/load/resume/list/close, prompts that stream, think, ask permission (allowed, rejected,
 * cancelled) and fail, a cancelled prompt, modes, and the errors for unknown sessions, methods and
 * bad params. Prompts are the scripted agent's.
 */

const TOOL = '/tool echo-args {"n":1}';
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

/** Sends a request, its error (if any) being part of what is compared. */
const ask = (ctx: AcpScenarioContext, method: string, params?: unknown) => ctx.ctx.request(method, params).then(() => undefined);

const inSession = (name: string, body: (ctx: AcpScenarioContext, sessionId: string, modes: acp.NewSessionResponse["modes"]) => Promise<void>, permission?: AcpScenario["permission"]): AcpScenario => ({
  name,
  ...(permission ? { permission } : {}),
  run: async (ctx) => {
    const session = await ctx.newSession();
    await body(ctx, session.sessionId, session.modes);
  },
});

/** The session's mode set to the one that asks the user, then a prompt that runs a command. */
async function commandInAskingMode(ctx: AcpScenarioContext, sessionId: string): Promise<void> {
  await ctx.ctx.request("session/set_mode", { sessionId, modeId: ctx.askingMode });
  await ctx.prompt(sessionId, `Run it\n${TOOL}`);
}

export const ACP_SCENARIOS: AcpScenario[] = [
  { name: "initialize", run: (ctx) => ask(ctx, "initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }) },
  { name: "initialize with a newer protocolVersion", run: (ctx) => ask(ctx, "initialize", { protocolVersion: 999, clientCapabilities: {} }) },
  { name: "initialize without protocolVersion", run: (ctx) => ask(ctx, "initialize", { clientCapabilities: {} }) },
  { name: "authenticate with an unknown method", run: (ctx) => ask(ctx, "authenticate", { methodId: "no-such-method" }) },
  { name: "session/new", run: async (ctx) => void (await ctx.newSession()) },
  { name: "session/new with a relative cwd", run: (ctx) => ask(ctx, "session/new", { cwd: "relative/dir", mcpServers: [] }) },
  { name: "session/list", run: (ctx) => ask(ctx, "session/list", {}) },
  { name: "session/list with cwd", run: (ctx) => ask(ctx, "session/list", { cwd: ctx.cwd }) },
  { name: "session/load", run: (ctx) => ask(ctx, "session/load", { sessionId: ctx.talked, cwd: ctx.cwd, mcpServers: [] }) },
  { name: "session/load of an unknown session", run: (ctx) => ask(ctx, "session/load", { sessionId: UNKNOWN, cwd: ctx.cwd, mcpServers: [] }) },
  { name: "session/resume", run: (ctx) => ask(ctx, "session/resume", { sessionId: ctx.talked, cwd: ctx.cwd, mcpServers: [] }) },
  { name: "session/resume of an unknown session", run: (ctx) => ask(ctx, "session/resume", { sessionId: UNKNOWN, cwd: ctx.cwd, mcpServers: [] }) },
  inSession("a prompt that streams a reply", async (ctx, id) => void (await ctx.prompt(id, "Hello, how are you?"))),
  inSession("a prompt that thinks, then replies", async (ctx, id) => void (await ctx.prompt(id, "/think Weighing the options\nThe answer"))),
  inSession("a permission allowed once", (ctx, id) => commandInAskingMode(ctx, id), "allow_once"),
  inSession("a permission rejected once", (ctx, id) => commandInAskingMode(ctx, id), "reject_once"),
  inSession("a permission request cancelled", (ctx, id) => commandInAskingMode(ctx, id), "cancelled"),
  inSession("a prompt that fails", async (ctx, id) => void (await ctx.prompt(id, "/fail the model broke"))),
  inSession("a cancelled prompt", async (ctx, id) => {
    const prompt = ctx.prompt(id, "/think Taking my time\n/sleep 60000\nToo late");
    await ctx.update(id, (u) => u.sessionUpdate === "agent_thought_chunk");
    await ctx.ctx.notify("session/cancel", { sessionId: id });
    await prompt;
  }),
  inSession("session/set_mode to each mode", async (ctx, id, modes) => {
    for (const mode of modes?.availableModes ?? []) await ask(ctx, "session/set_mode", { sessionId: id, modeId: mode.id });
  }),
  inSession("session/set_mode to an unknown mode", async (ctx, id) => ask(ctx, "session/set_mode", { sessionId: id, modeId: "no-such-mode" })),
  inSession("session/close", async (ctx, id) => ask(ctx, "session/close", { sessionId: id })),
  { name: "session/prompt of an unknown session", run: (ctx) => ask(ctx, "session/prompt", { sessionId: UNKNOWN, prompt: [{ type: "text", text: "Hi" }] }) },
  inSession("session/prompt without prompt", async (ctx, id) => ask(ctx, "session/prompt", { sessionId: id })),
  { name: "an unknown method", run: (ctx) => ask(ctx, "session/doesNotExist", {}) },
];
