import * as acp from "@agentclientprotocol/sdk";
import type { AcpAgent } from "./acp-targets.js";
import type { ScenarioRun } from "./codex-run.js";
import { withLateNotificationsMoved } from "./late-notifications.js";

/**
 * Runs the ACP corpus on one agent with the official ACP SDK as the editor: one process, one
 * connection, scenarios in turn, each one's lines recorded. Permission requests are answered as
 * the scenario says; session updates are kept so a scenario can wait for one.
 */

export type PermissionAnswer = "allow_once" | "allow_always" | "reject_once" | "cancelled";

export interface AcpScenarioContext {
  ctx: acp.ClientContext;
  cwd: string;
  /** The agent's mode that asks the user before every command. */
  askingMode: string;
  /** A session made before the first scenario, with one completed prompt. */
  talked: string;
  /** session/new in the agent's cwd; resolves with its response. */
  newSession(): Promise<acp.NewSessionResponse>;
  /** A text prompt; resolves with its response. */
  prompt(sessionId: string, text: string): Promise<acp.PromptResponse>;
  /** Resolves once a session/update of `sessionId` that `pick` accepts has come (from this scenario on). */
  update(sessionId: string, pick: (update: Record<string, any>) => boolean): Promise<void>;
}

export interface AcpScenario {
  name: string;
  permission?: PermissionAnswer;
  run(ctx: AcpScenarioContext): Promise<void>;
}

export async function runAcpCorpus(agent: AcpAgent, scenarios: AcpScenario[]): Promise<ScenarioRun[]> {
  let permission: PermissionAnswer | undefined;
  const updates: Array<{ sessionId: string; update: Record<string, any> }> = [];
  const waiters = new Set<() => void>();
  const runs: ScenarioRun[] = [];
  try {
    await acp
      .client({ name: "tau-gateway-differential" })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        const option = params.options.find((o) => o.kind === permission);
        return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
      })
      .onNotification(acp.methods.client.session.update, async ({ params }) => {
        updates.push({ sessionId: params.sessionId, update: params.update as Record<string, any> });
        for (const wake of [...waiters]) wake();
      })
      .connectWith(acp.ndJsonStream(agent.input, agent.output), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const newSession = () => ctx.request(acp.methods.agent.session.new, { cwd: agent.cwd, mcpServers: [] });
        const prompt = (sessionId: string, text: string) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
        const talked = (await newSession()).sessionId;
        await prompt(talked, "Hello there");
        for (const scenario of scenarios) {
          permission = scenario.permission;
          const mark = agent.log.length;
          const from = updates.length;
          const update = (sessionId: string, pick: (u: Record<string, any>) => boolean) =>
            new Promise<void>((resolve, reject) => {
              const check = () => {
                if (!updates.slice(from).some((u) => u.sessionId === sessionId && pick(u.update))) return;
                waiters.delete(check);
                clearTimeout(timer);
                resolve();
              };
              const timer = setTimeout(() => {
                waiters.delete(check);
                reject(new Error("timed out waiting for a session update"));
              }, 15_000);
              waiters.add(check);
              check();
            });
          let failure: string | undefined;
          try {
            await scenario.run({ ctx, cwd: agent.cwd, askingMode: agent.askingMode, talked, newSession, prompt, update });
          } catch (error) {
            if (!(error instanceof acp.RequestError)) failure = (error as Error).message.split("\n")[0];
          }
          runs.push({ name: scenario.name, entries: agent.log.slice(mark).map((entry) => ({ ...entry, connection: 0 })), ...(failure ? { failure } : {}) });
        }
      });
  } finally {
    await agent.close();
  }
  // codex-acp announces a session's commands a moment after session/new.
  return withLateNotificationsMoved(runs, (m) => (m.method === "session/update" ? m.params?.sessionId : undefined), (m) => m.result?.sessionId);
}
