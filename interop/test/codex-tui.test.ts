import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CODEX_RELEASES } from "./support/codex-releases.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { interopRun, TAU_GATEWAY, type InteropRun } from "./support/gateway-process.js";

/**
 * The Codex terminal UI, the oldest and the newest release of the client window (0.169.0 and
 * 0.171.0), against `tau-gateway serve`, driven under tmux as a person would:
 * `codex --remote ws://HOST:PORT --remote-auth-token-env VAR` connects to WebSocket `/` with a
 * bearer token, a prompt makes the agent call the gateway's command tool, the UI's approval dialog
 * is answered "y", and the command's output and the agent's streamed answer appear. 0.171.0 first
 * lists sub-agent threads (`thread/list` with `sourceKinds: ["subAgentThreadSpawn"]`) and takes
 * any thread it is given there for a sub-agent's, whose composer sends nothing: the prompt reaching
 * the agent at all is the check that the filter holds. `codex resume` then finds the thread in its
picker, which lists cli and vscode threads only, and resumes it. Skipped without tmux.
 */

const TOKEN = "tui-interop-token-5d21";

let run: InteropRun;
const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0).reverse()) stop();
  run?.cleanup();
});

describe.skipIf(!hasTmux).each(CODEX_RELEASES)("the Codex terminal UI $version with tau-gateway serve as its remote app server", (release) => {
  it("holds a conversation in which the user approves a command", async () => {
    run = interopRun();
    const gateway = spawn(TAU_GATEWAY, ["serve", "--port", "0"], { env: { ...process.env, ...run.env, TAU_GATEWAY_TOKEN: TOKEN }, stdio: ["ignore", "ignore", "pipe"] });
    stops.push(() => gateway.kill("SIGTERM"));
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      gateway.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
        const listening = /tau-gateway listening on http:\/\/(\S+)/.exec(stderr);
        if (listening) resolve(`ws://${listening[1]}`);
      });
      gateway.on("exit", () => reject(new Error(`the gateway exited: ${stderr}`)));
    });

    const tui = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url, token: TOKEN, release });
    stops.push(() => tui.kill());

    await tui.shows("Ask Codex to do anything");
    await tui.shows("Tau");
    await tui.send(["Run the tool please", '/tool echo-args {"a":1}']);
    await tui.shows("Would you like to run the following command?");
    tui.press("y");
    const screen = await tui.shows("Tool echo-args returned");
    expect(screen).toContain("You approved codex to run");
    expect(screen).toContain("You said: Run the tool please");
    // userAgent names the Codex release the gateway serves: no warning of an older server, among
    // the warnings the UI keeps (F2) or on the screen.
    expect(await tui.warnings()).not.toContain("older than your Codex CLI");

    // `codex resume` lists what thread/list gives for sourceKinds [cli, vscode]: the gateway's
    // threads are there as Codex's own (source vscode), and the one picked comes back.
    tui.kill();
    const picker = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url, token: TOKEN, release, args: ["resume"] });
    stops.push(() => picker.kill());
    await picker.shows("Resume a previous session");
    await picker.shows("Run the tool please");
    picker.press("Enter");
    const resumed = await picker.shows("You said: Run the tool please");
    expect(resumed).not.toContain("Resume a previous session");
  });
});
