import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODEX_RELEASES } from "./support/codex-releases.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { officialProblems, recordedTranscript } from "./support/gateway-process.js";
import { interopEachTest } from "./support/interop-test.js";

/**
 * Tau's sub-agents in the newest Codex terminal UI (0.171.0), as it shows its own: the transcript's
 * agent-tool lines ("Spawned Scout", "Waiting for 2 agents", "Finished waiting"), `/subagents`
 * ("Sub-agents running" with what each running one last did, and the picker of the session's
 * agents, each a child thread), a child thread opened from the picker with its run (working while it
 * runs), and Esc there
 * interrupting that sub-agent alone. The scripted agent starts the sub-agents (`/subagent`,
 * `/subagent-slow`, see docs/embedded-host.md). Every message the gateway sent is checked against
 * the official schemas of the client window. Skipped without tmux.
 */

const TOKEN = "tui-subagents-token-8c3e";
const newest = CODEX_RELEASES.at(-1)!;
const PICKER = "Select an agent to watch.";

const { newRun, serve, stops } = interopEachTest();

describe.skipIf(!hasTmux)(`the Codex terminal UI ${newest.version} with Tau's sub-agents`, () => {
  it("lists them, previews the running one, opens a child thread with its run and interrupts it there", async () => {
    const run = newRun();
    const recordings = join(run.cwd, "..", "recordings");
    mkdirSync(recordings);
    const gateway = await serve(["--record", recordings], { ...run.env, TAU_GATEWAY_TOKEN: TOKEN });
    const tui = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url: gateway.url, token: TOKEN, release: newest });
    stops.push(() => tui.kill());

    await tui.shows("Ask Codex to do anything");
    await tui.send(["Start the helpers", "/subagent Scout look around the repo", "/subagent-slow 600000 Runner work slowly"]);
    // The parent's transcript: a collabAgentToolCall line per spawn and the wait, a subAgentActivity line per start.
    let screen = await tui.shows("Waiting for 2 agents");
    expect(screen).toMatch(/Spawned Scout \(scripted-1 medium\)\s+└ look around the repo/);
    expect(screen).toMatch(/Spawned Runner \(scripted-1 medium\)\s+└ work slowly/);
    expect(screen).toContain("Started `Scout`");
    expect(screen).toContain("Started `Runner`");

    // /subagents: the running one with what it last did (its child thread's items, which the UI
    // heard without loading that thread), then every agent of the session to pick from.
    screen = await tui.command("/subagents", (s) => s.includes(PICKER) && s.includes("Working on Runner…"));
    expect(screen).toMatch(/Sub-agents running\s+• `Runner`\s+MCP tau\/read\s+Working on Runner…/);
    expect(screen).not.toContain("No recent activity yet.");
    expect(screen).toMatch(/1\. • Main \[default\] \(current\)/);
    expect(screen).toMatch(/\d\. • Scout\s+[0-9a-f-]{36}/);
    expect(screen).toMatch(/\d\. • Runner\s+[0-9a-f-]{36}/);

    // The running sub-agent's child thread: its task, what it did so far, still at work (what it
    // said is commentary, not an answer); Esc interrupts it alone.
    await tui.pick("Runner", PICKER);
    screen = await tui.until((s) => s.includes("Working on Runner…") && /Working \(\d+s • esc to interrupt\)/.test(s), "showed the running child thread");
    expect(screen).toMatch(/› work slowly\s+• Called tau\.read\s+└ Read work slowly/);
    expect(screen).toContain("`Runner`");
    tui.press("Escape");
    await tui.shows("Conversation interrupted");

    // Back on the main thread, its turn went on: the wait ended with one done, one interrupted.
    await tui.command("/subagents", (s) => s.includes(PICKER));
    await tui.pick("Main", PICKER);
    screen = await tui.shows("Finished waiting");
    expect(screen).toMatch(/Finished waiting\s+└ Scout: Completed - Done: look around the repo\s+Runner: Interrupted/);
    expect(screen).toContain("Completed `Scout`");
    expect(screen).toContain("Interrupted `Runner`");
    await tui.shows("Tool wait_for_agents returned: Scout succeeded: Done: look around the repo; Runner was interrupted");

    // The finished sub-agent's child thread shows its whole run.
    await tui.command("/subagents", (s) => s.includes(PICKER));
    await tui.pick("Scout", PICKER);
    screen = await tui.shows("Done: look around the repo");
    expect(screen).toMatch(/› look around the repo\s+• Called tau\.read\s+└ Read look around the repo[\s\S]*• Done: look around the repo/);
    expect(screen).toContain("`Scout`");

    expect(officialProblems({ transcript: () => recordedTranscript(recordings) })).toEqual([]);
  });
});
