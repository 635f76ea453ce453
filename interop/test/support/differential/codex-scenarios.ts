import type { CodexScenario, CodexScenarioContext } from "./codex-run.js";

/**
 * The Codex scenario corpus: every method the gateway serves (src/registry/codex), every filter
 * and option of the list and read methods, turns that stream a reply, think, ask for approval
 * (accepted, declined, cancelled), ask the user, are steered, interrupted and fail, and the errors
 * for unknown ids and bad params. Prompts are the scripted agent's (src/host/scripted-agent.ts),
 * which the mock Responses server acts out for the real Codex.
 */

const TOOL = '/tool echo-args {"n":1}';

/** A request answered without side effects, with its params. */
const simple = (name: string, method: string, params?: (ctx: CodexScenarioContext) => unknown): CodexScenario => ({
  name,
  run: async (ctx) => void (await ctx.client.requestRaw(method, params ? params(ctx) : undefined)),
});

const SOURCE_KINDS = ["cli", "vscode", "exec", "appServer", "subAgent", "subAgentReview", "subAgentCompact", "subAgentThreadSpawn", "subAgentOther", "unknown"];

const handshake: CodexScenario[] = [
  {
    name: "initialize and initialized",
    run: async (ctx) => void (await ctx.connect()),
  },
  {
    name: "initialize twice",
    run: async (ctx) => {
      const client = await ctx.connect();
      await client.requestRaw("initialize", { clientInfo: { name: "codex-tests", version: "1" } });
    },
  },
  {
    name: "a request before initialize",
    run: async (ctx) => {
      const client = await ctx.connect({ initialize: false });
      await client.requestRaw("thread/list", {});
    },
  },
  {
    name: "an experimental method without experimentalApi",
    run: async (ctx) => {
      const client = await ctx.connect({ experimentalApi: false });
      await client.requestRaw("collaborationMode/list", {});
    },
  },
  {
    name: "initialize without clientInfo",
    run: async (ctx) => {
      const client = await ctx.connect({ initialize: false });
      await client.requestRaw("initialize", {});
    },
  },
  simple("an unknown method", "thread/doesNotExist", () => ({})),
];

const catalog: CodexScenario[] = [
  simple("account/read", "account/read", () => ({ refreshToken: false })),
  simple("model/list", "model/list", () => ({})),
  simple("config/read", "config/read", (ctx) => ({ includeLayers: false, cwd: ctx.cwd })),
  simple("configRequirements/read", "configRequirements/read"),
  simple("collaborationMode/list", "collaborationMode/list", () => ({})),
  simple("permissionProfile/list", "permissionProfile/list", () => ({})),
  simple("skills/list", "skills/list", (ctx) => ({ cwds: [ctx.cwd] })),
  simple("hooks/list", "hooks/list", (ctx) => ({ cwds: [ctx.cwd] })),
  simple("plugin/installed", "plugin/installed", () => ({})),
  simple("account/bedrock/checkGovCloudRequirements", "account/bedrock/checkGovCloudRequirements", () => ({})),
];

const threads: CodexScenario[] = [
  { name: "thread/start", run: async (ctx) => void (await ctx.startThread()) },
  { name: "thread/start in another cwd with approvalPolicy never", run: async (ctx) => void (await ctx.startThread({ cwd: ctx.otherCwd, approvalPolicy: "never" })) },
  simple("thread/start with a cwd that is not a string", "thread/start", () => ({ cwd: 42 })),
  simple("thread/read", "thread/read", (ctx) => ({ threadId: ctx.fixtures.talked })),
  simple("thread/read with includeTurns", "thread/read", (ctx) => ({ threadId: ctx.fixtures.talked, includeTurns: true })),
  simple("thread/read of a thread without turns", "thread/read", (ctx) => ({ threadId: ctx.fixtures.empty, includeTurns: true })),
  simple("thread/read of an unknown thread", "thread/read", () => ({ threadId: "00000000-0000-4000-8000-000000000000" })),
  simple("thread/read without threadId", "thread/read", () => ({})),
  simple("thread/resume of a thread with turns", "thread/resume", (ctx) => ({ threadId: ctx.fixtures.talked })),
  simple("thread/resume of a thread without turns", "thread/resume", (ctx) => ({ threadId: ctx.fixtures.empty })),
  simple("thread/resume of an unknown thread", "thread/resume", () => ({ threadId: "00000000-0000-4000-8000-000000000000" })),
  {
    name: "thread/resume in a new process, after the first one quit",
    run: async (ctx) => {
      const first = await ctx.connect();
      const { thread } = await ctx.startThread({ cwd: ctx.cwd }, first);
      await ctx.turn(thread.id, "Before the restart", {}, first);
      await ctx.disconnect(first);
      const second = await ctx.connect();
      await second.request("thread/resume", { threadId: thread.id });
      await ctx.turn(thread.id, "After the restart", {}, second);
    },
  },
  simple("thread/loaded/list", "thread/loaded/list", () => ({})),
  {
    name: "thread/loaded/list on a new connection",
    run: async (ctx) => {
      const client = await ctx.connect();
      await client.requestRaw("thread/loaded/list", {});
    },
  },
];

const lists: CodexScenario[] = [
  simple("thread/list", "thread/list", () => ({})),
  {
    name: "thread/list with limit 1 and its cursor",
    run: async (ctx) => {
      const first = await ctx.client.request("thread/list", { limit: 1 });
      await ctx.client.requestRaw("thread/list", { limit: 1, cursor: first.nextCursor });
    },
  },
  simple("thread/list with a cursor it never gave", "thread/list", () => ({ cursor: "not-a-cursor" })),
  simple("thread/list with limit 0", "thread/list", () => ({ limit: 0 })),
  simple("thread/list with cwd", "thread/list", (ctx) => ({ cwd: ctx.otherCwd })),
  simple("thread/list with a list of cwds", "thread/list", (ctx) => ({ cwd: [ctx.cwd, ctx.otherCwd] })),
  simple("thread/list with searchTerm", "thread/list", () => ({ searchTerm: "there" })),
  simple("thread/list with a searchTerm nothing matches", "thread/list", () => ({ searchTerm: "no-thread-says-this" })),
  simple("thread/list with modelProviders of the server", "thread/list", (ctx) => ({ modelProviders: [ctx.fixtures.modelProvider] })),
  simple("thread/list with modelProviders of nobody", "thread/list", () => ({ modelProviders: ["nobody"] })),
  simple("thread/list with empty modelProviders", "thread/list", () => ({ modelProviders: [] })),
  simple("thread/list with archived false", "thread/list", () => ({ archived: false })),
  // What the terminal UI's resume picker (`codex resume`) asks for its first page.
  simple("thread/list as the resume picker asks", "thread/list", (ctx) => ({ limit: 25, sortKey: "updated_at", modelProviders: [ctx.fixtures.modelProvider], sourceKinds: ["cli", "vscode"], archived: false, cwd: ctx.cwd })),
  simple("thread/list with archived true", "thread/list", () => ({ archived: true })),
  simple("thread/list with includedThreadIds", "thread/list", (ctx) => ({ includedThreadIds: [ctx.fixtures.elsewhere] })),
  simple("thread/list with excludedThreadIds", "thread/list", (ctx) => ({ excludedThreadIds: [ctx.fixtures.talked] })),
  ...SOURCE_KINDS.map((kind) => simple(`thread/list with sourceKinds ${kind}`, "thread/list", () => ({ sourceKinds: [kind] }))),
  simple("thread/list with sourceKinds subAgentThreadSpawn, archived", "thread/list", () => ({ sourceKinds: ["subAgentThreadSpawn"], archived: true })),
  simple("thread/turns/list", "thread/turns/list", (ctx) => ({ threadId: ctx.fixtures.talked })),
  simple("thread/turns/list ascending", "thread/turns/list", (ctx) => ({ threadId: ctx.fixtures.talked, sortDirection: "asc" })),
  simple("thread/turns/list with itemsView notLoaded", "thread/turns/list", (ctx) => ({ threadId: ctx.fixtures.talked, itemsView: "notLoaded" })),
  simple("thread/turns/list with itemsView full", "thread/turns/list", (ctx) => ({ threadId: ctx.fixtures.talked, itemsView: "full" })),
  {
    name: "thread/turns/list with limit 1 and its cursor",
    run: async (ctx) => {
      const first = await ctx.client.request("thread/turns/list", { threadId: ctx.fixtures.elsewhere, limit: 1 });
      await ctx.client.requestRaw("thread/turns/list", { threadId: ctx.fixtures.elsewhere, limit: 1, cursor: first.nextCursor });
    },
  },
  simple("thread/turns/list of a thread without turns", "thread/turns/list", (ctx) => ({ threadId: ctx.fixtures.empty })),
  simple("thread/turns/list of an unknown thread", "thread/turns/list", () => ({ threadId: "00000000-0000-4000-8000-000000000000" })),
];

/** A scenario on a thread of its own. */
const onThread = (name: string, body: (ctx: CodexScenarioContext, threadId: string) => Promise<void>, answers?: CodexScenario["answers"]): CodexScenario => ({
  name,
  ...(answers ? { answers } : {}),
  run: async (ctx) => {
    const { thread } = await ctx.startThread();
    await body(ctx, thread.id);
  },
});

const turns: CodexScenario[] = [
  onThread("a turn that streams a reply", async (ctx, id) => void (await ctx.turn(id, "Hello, how are you?"))),
  onThread("a turn that thinks, then replies", async (ctx, id) => void (await ctx.turn(id, "/think Weighing the options\nThe answer"))),
  onThread("an approval accepted", async (ctx, id) => void (await ctx.turn(id, `Run it\n${TOOL}`)), { approval: "accept" }),
  onThread("an approval accepted for the session", async (ctx, id) => void (await ctx.turn(id, `Run it\n${TOOL}`)), { approval: "acceptForSession" }),
  onThread("an approval declined", async (ctx, id) => void (await ctx.turn(id, `Run it\n${TOOL}`)), { approval: "decline" }),
  onThread("an approval cancelled", async (ctx, id) => void (await ctx.turn(id, `Run it\n${TOOL}`)), { approval: "cancel" }),
  onThread("approvalPolicy never runs the command unasked", async (ctx, id) => void (await ctx.turn(id, `Run it\n${TOOL}`, { approvalPolicy: "never" }))),
  onThread("a question the user answers", async (ctx, id) => void (await ctx.turn(id, 'Ask\n/tool ask_user {"question":"Which colour?","options":["red","blue"]}')), { userInput: "blue" }),
  onThread("a turn that fails", async (ctx, id) => void (await ctx.turn(id, "/fail the model broke"))),
  onThread("an interrupted turn", async (ctx, id) => {
    const from = ctx.client.received.length;
    const turnId = await ctx.startTurn(id, "/think Taking my time\n/sleep 60000\nToo late");
    await ctx.client.waitFor((m) => m.method === "item/reasoning/summaryTextDelta", 15_000, from);
    await ctx.client.request("turn/interrupt", { threadId: id, turnId });
    await ctx.client.turnCompleted(turnId);
  }),
  // The steer comes while the model pauses (the mock's stream, the scripted agent's /sleep), long
  // enough for it on a busy machine; the turn then takes the steered input and completes.
  onThread("a steered turn", async (ctx, id) => {
    const from = ctx.client.received.length;
    const turnId = await ctx.startTurn(id, "/think Listening\n/sleep 3000\nFirst");
    await ctx.client.waitFor((m) => m.method === "item/reasoning/summaryTextDelta", 15_000, from);
    await ctx.client.request("turn/steer", { threadId: id, expectedTurnId: turnId, input: [{ type: "text", text: "Steered", text_elements: [] }] });
    await ctx.client.turnCompleted(turnId, 30_000);
    // The reply to the steered input, and the end of the turn that carries it (the same one on Codex).
    const reply = await ctx.client.waitFor((m) => m.method === "item/completed" && m.params.item.type === "agentMessage" && m.params.item.text === "You said: Steered", 30_000, from);
    await ctx.client.turnCompleted(reply.params.turnId, 30_000);
  }),
  onThread("turn/steer with no turn running", async (ctx, id) => void (await ctx.client.requestRaw("turn/steer", { threadId: id, expectedTurnId: "00000000-0000-4000-8000-000000000000", input: [{ type: "text", text: "Hi", text_elements: [] }] }))),
  onThread("turn/interrupt with no turn running", async (ctx, id) => void (await ctx.client.requestRaw("turn/interrupt", { threadId: id, turnId: "00000000-0000-4000-8000-000000000000" }))),
  simple("turn/interrupt of an unknown thread", "turn/interrupt", () => ({ threadId: "00000000-0000-4000-8000-000000000000", turnId: "00000000-0000-4000-8000-000000000000" })),
  simple("turn/start on an unknown thread", "turn/start", () => ({ threadId: "00000000-0000-4000-8000-000000000000", input: [{ type: "text", text: "Hi", text_elements: [] }] })),
  onThread("turn/start without input", async (ctx, id) => void (await ctx.client.requestRaw("turn/start", { threadId: id }))),
  onThread("thread/read with includeTurns after a turn", async (ctx, id) => {
    await ctx.turn(id, "Remember this");
    await ctx.client.requestRaw("thread/read", { threadId: id, includeTurns: true });
  }),
  onThread(
    "thread/turns/list of a turn that ran a command",
    async (ctx, id) => {
      await ctx.turn(id, `Run it\n${TOOL}`);
      await ctx.client.requestRaw("thread/turns/list", { threadId: id });
    },
    { approval: "accept" },
  ),
  onThread("thread/resume after a turn", async (ctx, id) => {
    await ctx.turn(id, "Remember that");
    await ctx.client.requestRaw("thread/resume", { threadId: id });
  }),
];

export const CODEX_SCENARIOS: CodexScenario[] = [...handshake, ...catalog, ...threads, ...lists, ...turns];
