import type { CodexTestClient } from "../../../../test/support/codex-client.js";
import type { CodexTarget, Connection } from "./codex-targets.js";
import { withLateNotificationsMoved } from "./late-notifications.js";
import type { WireEntry } from "./wire-diff.js";

/**
 * Runs a corpus of Codex scenarios on one target: one shared connection (initialized with
 * `experimentalApi`, as the terminal UI and codex-acp do), a few threads made before the first
 * scenario for the list and read methods to find, then each scenario in turn with what it wrote
 * and read recorded. A scenario that needs a connection of its own (the handshake, resuming
 * elsewhere) opens one; it is closed when the scenario ends.
 */

/** How the client answers the server's requests during a scenario. */
export interface Answers {
  /** The decision for item/commandExecution/requestApproval. */
  approval?: "accept" | "acceptForSession" | "decline" | "cancel";
  /** The answer text of item/tool/requestUserInput. */
  userInput?: string;
}

/** Threads made before the scenarios, the same way on every target. */
export interface CodexFixtures {
  /** In `cwd`, one completed turn "Hello there". */
  talked: string;
  /** In `otherCwd`, one completed turn "Somewhere else". */
  elsewhere: string;
  /** In `cwd`, no turns. */
  empty: string;
  /** The model provider threads of this target report. */
  modelProvider: string;
}

export interface CodexScenarioContext {
  client: CodexTestClient;
  cwd: string;
  otherCwd: string;
  fixtures: CodexFixtures;
  /** A new connection (a process of its own), initialized unless told otherwise. */
  connect(options?: { initialize?: boolean; experimentalApi?: boolean }): Promise<CodexTestClient>;
  /** Closes a connection `connect` opened (its process ends), as a client that quits does. */
  disconnect(client: CodexTestClient): Promise<void>;
  /** thread/start, resolved once thread/started has come too. */
  startThread(params?: Record<string, unknown>, client?: CodexTestClient): Promise<any>;
  /** turn/start; resolves with the turn id once the response came. */
  startTurn(threadId: string, text: string, extra?: Record<string, unknown>, client?: CodexTestClient): Promise<string>;
  /** turn/start and its turn/completed. */
  turn(threadId: string, text: string, extra?: Record<string, unknown>, client?: CodexTestClient): Promise<any>;
}

export interface CodexScenario {
  name: string;
  answers?: Answers;
  run(ctx: CodexScenarioContext): Promise<void>;
}

export interface ScenarioRun {
  name: string;
  entries: WireEntry[];
  /** Why the scenario could not be played to its end, if it could not. */
  failure?: string;
}

const text = (value: string) => [{ type: "text", text: value, text_elements: [] }];

function answering(client: CodexTestClient, answers: () => Answers): void {
  client.onRequest("item/commandExecution/requestApproval", () => {
    const decision = answers().approval;
    return decision ? { decision } : undefined;
  });
  client.onRequest("item/tool/requestUserInput", (params: { questions: Array<{ id: string }> }) => {
    const answer = answers().userInput;
    return answer === undefined ? undefined : { answers: Object.fromEntries(params.questions.map((q) => [q.id, { answers: [answer] }])) };
  });
}

async function startThread(client: CodexTestClient, params: Record<string, unknown>): Promise<any> {
  const from = client.received.length;
  const result = await client.request("thread/start", params);
  await client.waitFor((m) => m.method === "thread/started" && m.params.thread.id === result.thread.id, 15_000, from);
  return result;
}

async function startTurn(client: CodexTestClient, threadId: string, value: string, extra: Record<string, unknown> = {}): Promise<string> {
  const { turn } = await client.request("turn/start", { threadId, input: text(value), ...extra });
  return turn.id as string;
}

export async function runCodexCorpus(target: CodexTarget, scenarios: CodexScenario[], onScenario?: (name: string) => void): Promise<ScenarioRun[]> {
  let answers: Answers = {};
  const main = await target.connect();
  const runs: ScenarioRun[] = [];
  try {
    answering(main.client, () => answers);
    await main.client.initialize({ experimentalApi: true });
    const talked = await startThread(main.client, { cwd: target.cwd });
    await main.client.turnCompleted(await startTurn(main.client, talked.thread.id, "Hello there"));
    const elsewhere = await startThread(main.client, { cwd: target.otherCwd });
    await main.client.turnCompleted(await startTurn(main.client, elsewhere.thread.id, "Somewhere else"));
    const empty = await startThread(main.client, { cwd: target.cwd });
    // Read once before the first scenario, so what a server sends about them late, or on their first read, is not a scenario's.
    for (const thread of [talked, elsewhere, empty]) await main.client.requestRaw("thread/read", { threadId: thread.thread.id });
    const fixtures: CodexFixtures = { talked: talked.thread.id, elsewhere: elsewhere.thread.id, empty: empty.thread.id, modelProvider: talked.thread.modelProvider };

    for (const scenario of scenarios) {
      onScenario?.(scenario.name);
      answers = scenario.answers ?? {};
      const mark = main.log.length;
      const extra: Connection[] = [];
      const ctx: CodexScenarioContext = {
        client: main.client,
        cwd: target.cwd,
        otherCwd: target.otherCwd,
        fixtures,
        connect: async ({ initialize = true, experimentalApi = true } = {}) => {
          const connection = await target.connect();
          extra.push(connection);
          answering(connection.client, () => answers);
          if (initialize) await connection.client.initialize(experimentalApi ? { experimentalApi: true } : null);
          return connection.client;
        },
        disconnect: async (client) => {
          await extra.find((connection) => connection.client === client)?.close();
        },
        startThread: (params = { cwd: target.cwd }, client = main.client) => startThread(client, params),
        startTurn: (threadId, value, more, client = main.client) => startTurn(client, threadId, value, more),
        turn: async (threadId, value, more, client = main.client) => client.turnCompleted(await startTurn(client, threadId, value, more), 30_000),
      };
      let failure: string | undefined;
      try {
        await scenario.run(ctx);
      } catch (error) {
        failure = (error as Error).message.split("\n")[0];
      }
      const entries: WireEntry[] = main.log.slice(mark).map((entry) => ({ ...entry, connection: 0 }));
      extra.forEach((connection, i) => entries.push(...connection.log.map((entry) => ({ ...entry, connection: i + 1 }))));
      for (const connection of extra) await connection.close();
      runs.push({ name: scenario.name, entries, ...(failure ? { failure } : {}) });
    }
  } finally {
    await main.close();
  }
  return withLateNotificationsMoved(runs, (m) => m.params?.threadId ?? m.params?.thread?.id, (m) => m.result?.thread?.id);
}
