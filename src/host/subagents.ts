import { randomUUID } from "node:crypto";
import type { Activity, AgentRun, AgentUsage, SubagentActivitiesAgentState, SubagentActivitiesState } from "../../generated/tau-v18.js";
import { MAX_SUBAGENT_ACTIVITIES } from "../registry/tau/snapshot.js";
import { COST_PER_TOKEN, SCRIPTED_MODEL } from "./catalog.js";
import type { SubagentPlan } from "./scripted-agent.js";
import { countWords } from "./scripted-agent.js";
import { runScriptedSubagent, type SubagentEnding } from "./subagent-run.js";
import type { SessionState } from "./session-state.js";

/**
 * The sub-agents of one loaded session (spec §4.6, §5.8, §5.11, §6.3). Each has its `AgentRun`
 * in the snapshot (`agent.set` deltas, cause `agent-run`): running, then succeeded with its
 * response, failed or interrupted, with its usage and cost (which the session's cost includes).
 * What it does meanwhile goes on the transient activity channel: `session.subagentActivities`
 * messages whose revision grows by one per message, each `agent.set` carrying that agent's whole
 * list for its current run (at most 64 activities, the oldest dropped). Runs go on after the turn
 * that started them and after `session.interrupt`; `interrupt` stops one (the session runs it
 * through its mutation queue), shutdown stops them all.
 */

interface LiveRun {
  readonly controller: AbortController;
  readonly settled: Promise<AgentRun>;
}

export interface SubagentsOptions {
  state: SessionState;
  streamDelayMs: number;
  cwd(): string;
  log(line: string): void;
}

/** What a turn is given to start sub-agents with. */
export interface SubagentLauncher {
  /** Starts a sub-agent; `settled` resolves with its AgentRun once the run has ended. */
  start(plan: SubagentPlan): { agentId: string; settled: Promise<AgentRun> };
}

export class Subagents implements SubagentLauncher {
  private revision = 1;
  private readonly lists = new Map<string, SubagentActivitiesAgentState>();
  private readonly live = new Map<string, LiveRun>();

  constructor(private readonly options: SubagentsOptions) {}

  /** The activity channel's baseline (session.observe). */
  activities(): SubagentActivitiesState {
    return { revision: this.revision, agents: Object.fromEntries(this.lists) };
  }

  start(plan: SubagentPlan): { agentId: string; settled: Promise<AgentRun> } {
    const { state } = this.options;
    const agentId = randomUUID();
    const now = Date.now();
    const agent: AgentRun = {
      id: agentId,
      title: plan.title,
      availability: "running",
      model: { provider: SCRIPTED_MODEL.provider, id: SCRIPTED_MODEL.id, reasoning: state.snapshot.settings.reasoning ?? "medium" },
      workingDirectory: this.options.cwd(),
      createdAt: now,
      run: { revision: 1, startedAt: now, interruptRequested: false, status: "running" },
      costTotal: 0,
      usage: usageOf(0, 0),
    };
    state.commit({ type: "agent-run" }, [{ type: "agent.set", agent }]);
    this.setList(agentId, { runRevision: 1, activities: [] });
    const controller = new AbortController();
    const settled = runScriptedSubagent(
      {
        signal: controller.signal,
        streamDelayMs: this.options.streamDelayMs,
        record: (activity) => this.record(agentId, activity),
      },
      plan,
    )
      .catch((error: unknown): SubagentEnding => {
        this.options.log(`session ${state.sessionId}: sub-agent ${agentId} failed: ${(error as Error).stack ?? String(error)}`);
        return { status: "failed", message: `the sub-agent failed: ${(error as Error).message}` };
      })
      .then((ending) => this.settle(agentId, plan, ending));
    this.live.set(agentId, { controller, settled });
    return { agentId, settled };
  }

  /**
   * Interrupts a sub-agent's run and waits until it has settled; false when the session has no
   * sub-agent of that id. A sub-agent that is not running is found, with nothing to stop.
   */
  async interrupt(agentId: string): Promise<boolean> {
    const agent = this.options.state.snapshot.agents[agentId];
    if (!agent) return false;
    const run = this.live.get(agentId);
    if (!run || agent.run.status !== "running") return true;
    if (!agent.run.interruptRequested) {
      this.options.state.commit({ type: "agent-run" }, [{ type: "agent.set", agent: { ...agent, run: { ...agent.run, interruptRequested: true } } }]);
    }
    run.controller.abort();
    await run.settled;
    return true;
  }

  /** Host shutdown: every run is interrupted and awaited. */
  async shutdown(): Promise<void> {
    const runs = [...this.live.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.settled));
  }

  private record(agentId: string, activity: Activity): void {
    const list = this.lists.get(agentId);
    if (!list) return;
    this.setList(agentId, { runRevision: list.runRevision, activities: [...list.activities, activity].slice(-MAX_SUBAGENT_ACTIVITIES) });
  }

  private setList(agentId: string, list: SubagentActivitiesAgentState): void {
    this.lists.set(agentId, list);
    this.revision += 1;
    this.options.state.publish({
      version: 18,
      type: "session.subagentActivities",
      sessionId: this.options.state.sessionId,
      revision: this.revision,
      changes: [{ type: "agent.set", agentId, state: list }],
    });
  }

  /** Records how the run ended; the caller's `settled` carries it (rejects only if the agent left the snapshot meanwhile). */
  private settle(agentId: string, plan: SubagentPlan, ending: SubagentEnding): AgentRun {
    const { state } = this.options;
    this.live.delete(agentId);
    const agent = state.snapshot.agents[agentId];
    if (!agent) throw new Error(`sub-agent ${agentId} is no longer in the session`);
    const finishedAt = Date.now();
    const base = { revision: agent.run.revision, startedAt: agent.run.startedAt, interruptRequested: agent.run.interruptRequested };
    const run: AgentRun["run"] =
      ending.status === "succeeded"
        ? { ...base, status: "succeeded", finishedAt, response: ending.response }
        : ending.status === "failed"
          ? { ...base, status: "failed", finishedAt, failure: { kind: "runtime-error", message: ending.message } }
          : { ...base, status: "interrupted", finishedAt, failure: { kind: "interrupted", message: "the sub-agent was interrupted" } };
    // Scripted usage: one token per word of the title and task in, of the answer out.
    const input = countWords(`${plan.title} ${plan.task}`);
    const output = ending.status === "succeeded" ? countWords(ending.response) : 0;
    const cost = (input + output) * COST_PER_TOKEN;
    const settled: AgentRun = { ...agent, availability: "idle", run, usage: usageOf(input, output), costTotal: agent.costTotal + cost };
    state.commit({ type: "agent-run" }, [
      { type: "agent.set", agent: settled },
      { type: "cost.set", costTotal: state.snapshot.costTotal + cost },
    ]);
    return settled;
  }
}

function usageOf(input: number, output: number): AgentUsage {
  return { input, output, cacheRead: 0, cacheWrite: 0, contextWindowUsageTokens: input + output, contextWindow: SCRIPTED_MODEL.contextWindow };
}
