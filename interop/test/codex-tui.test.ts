import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { interopRoot, interopRun, TAU_GATEWAY, type InteropRun } from "./support/gateway-process.js";

/**
 * The Codex terminal UI 0.169.0 against `tau-gateway serve`, driven under tmux as a person would:
 * `codex --remote ws://HOST:PORT --remote-auth-token-env VAR` connects to WebSocket `/` with a
 * bearer token, a prompt makes the agent call the gateway's command tool, the UI's approval dialog
 * is answered "y", and the command's output and the agent's answer appear. Skipped without tmux.
 */

const CODEX = join(interopRoot, "node_modules", ".bin", "codex");
const TOKEN = "tui-interop-token-5d21";
const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let run: InteropRun;
const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0).reverse()) stop();
  run?.cleanup();
});

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });

async function screenShows(session: string, text: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = tmux("capture-pane", "-t", session, "-p");
    if (screen.includes(text)) return screen;
    if (Date.now() > deadline) throw new Error(`the screen never showed ${JSON.stringify(text)}:\n${screen}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(!hasTmux)("the Codex terminal UI with tau-gateway serve as its remote app server", () => {
  it("holds a conversation in which the user approves a command", async () => {
    run = interopRun();
    const home = join(run.cwd, "..", "home");
    mkdirSync(home, { recursive: true });
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

    const session = `tau-gateway-tui-${process.pid}`;
    const command = `cd ${run.cwd} && HOME=${home} TAU_TOKEN=${TOKEN} ${CODEX} --remote ${url} --remote-auth-token-env TAU_TOKEN`;
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45", command);
    stops.push(() => tmux("kill-session", "-t", session));

    await screenShows(session, "Ask Codex to do anything");
    await screenShows(session, "Tau");
    // The scripted agent reads directives from lines starting with "/": after a first line, so the UI does not take it for a slash command.
    tmux("send-keys", "-t", session, "-l", "Run the tool please");
    await screenShows(session, "› Run the tool please");
    tmux("send-keys", "-t", session, "C-j");
    tmux("send-keys", "-t", session, "-l", '/tool echo-args {"a":1}');
    await screenShows(session, '/tool echo-args {"a":1}');
    tmux("send-keys", "-t", session, "Enter");
    await screenShows(session, "Would you like to run the following command?");
    tmux("send-keys", "-t", session, "y");
    const screen = await screenShows(session, "Tool echo-args returned");
    expect(screen).toContain("You approved codex to run");
    expect(screen).toContain("You said: Run the tool please");
  });
});
