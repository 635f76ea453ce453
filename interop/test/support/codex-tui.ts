import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { CODEX_RELEASES, type CodexRelease } from "./codex-releases.js";

/**
 * The Codex terminal UI (a release of codex-releases.ts, the pinned one unless told) under tmux, driven as a person would: it is
 * started against a gateway's WebSocket `/` with a bearer token, keys are typed into it, and what
 * it shows is read back with `tmux capture-pane`, polled until the awaited text appears or goes.
 */


export const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * A tmux server of this test run's own (`-L`, named by vitest.config.ts, killed when the run
 * ends): runs side by side on one machine (or a person's own tmux) never share one, so none can
 * take another's server down with it.
 */
const SOCKET = process.env.TAU_INTEROP_TMUX ?? `tau-gateway-interop-${process.pid}`;
const tmux = (...args: string[]) => execFileSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });

export interface TuiOptions {
  /** Working directory of the UI (the thread's). */
  cwd: string;
  /** HOME of the UI: Codex keeps its state there. */
  home: string;
  /** The gateway's ws://HOST:PORT. */
  url: string;
  token: string;
  /** Arguments before `--remote` (e.g. `resume THREAD_ID`). */
  args?: string[];
  /** Which release of the UI: the pinned one unless told. */
  release?: CodexRelease;
}

let started = 0;

export class CodexTui {
  private constructor(readonly session: string) {}

  /** Starts the UI in a new tmux session of 160×45 cells. */
  static start({ cwd, home, url, token, args = [], release = CODEX_RELEASES[0]! }: TuiOptions): CodexTui {
    mkdirSync(home, { recursive: true });
    const session = `tau-gateway-tui-${process.pid}-${++started}`;
    const command = `cd ${cwd} && HOME=${home} TAU_TOKEN=${token} ${process.execPath} ${release.bin} ${args.join(" ")} --remote ${url} --remote-auth-token-env TAU_TOKEN`;
    // The server is told not to exit once its last session is killed (a UI killed and another
    // started right after would otherwise reach a server on its way out).
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45", command, ";", "set-option", "-g", "exit-empty", "off");
    return new CodexTui(session);
  }

  /** What the pane shows now. */
  screen(): string {
    return tmux("capture-pane", "-t", this.session, "-p");
  }

  /** Resolves with the screen once it shows `text`. */
  async shows(text: string, timeoutMs = 60_000): Promise<string> {
    return this.until((screen) => screen.includes(text), `showed ${JSON.stringify(text)}`, timeoutMs);
  }

  /** Resolves with the screen once it no longer shows `text`. */
  async hides(text: string, timeoutMs = 60_000): Promise<string> {
    return this.until((screen) => !screen.includes(text), `stopped showing ${JSON.stringify(text)}`, timeoutMs);
  }

  /** Types `text` literally (no key names). */
  type(text: string): void {
    tmux("send-keys", "-t", this.session, "-l", text);
  }

  /** Presses keys by tmux name (`Enter`, `C-j`, `y`). */
  press(...keys: string[]): void {
    tmux("send-keys", "-t", this.session, ...keys);
  }

  /**
   * Answers the dialog that shows `dialog` with `key`, pressed again while it still shows (a key
   * pressed as a dialog first paints, e.g. in a UI that just resumed a thread, can be lost);
   * resolves once the dialog is gone.
   */
  async answer(dialog: string, key: string, timeoutMs = 30_000): Promise<string> {
    let pressed = 0;
    return this.until(
      (screen) => {
        if (!screen.includes(dialog)) return true;
        if (Date.now() - pressed > 2_000) {
          this.press(key);
          pressed = Date.now();
        }
        return false;
      },
      `closed the dialog after ${JSON.stringify(key)}`,
      timeoutMs,
    );
  }

  /**
   * Sends a message of several lines: the first typed and awaited on screen, the others after
   * C-j (a new line in the composer). The scripted agent reads directives from lines starting with
   * "/": they follow a first line, so the UI does not take them for its own slash commands.
   */
  async send(lines: string[]): Promise<void> {
    const [first, ...rest] = lines;
    this.type(first!);
    await this.shows(`› ${first}`);
    for (const line of rest) {
      this.press("C-j");
      this.type(line);
      await this.shows(line);
    }
    this.press("Enter");
  }

  /**
   * The text of every warning the UI holds, paged through with F2 and → (the UIs that keep them
   * say so in the footer, "N warnings · f2 to view"), else the screen as it is.
   */
  async warnings(): Promise<string> {
    const screen = this.screen();
    if (!/warnings? · f2 to view/.test(screen)) return screen;
    this.press("F2");
    const first = await this.until((s) => /Warnings · 1 of \d+/.test(s), "listed its warnings", 10_000);
    const count = Number(/Warnings · 1 of (\d+)/.exec(first)![1]);
    const pages = [first];
    for (let n = 2; n <= count; n++) {
      this.press("Right");
      pages.push(await this.shows(`Warnings · ${n} of ${count}`, 10_000));
    }
    this.press("Escape");
    return pages.join("\n");
  }

  /** The id of the thread the UI is on, as its /status shows it. */
  async threadId(): Promise<string> {
    const screen = await this.command("/status", (s) => /Session:\s+\S+/.test(s));
    return /Session:\s+(\S+)/.exec(screen)![1]!;
  }

  /**
   * Runs one of the UI's slash commands and resolves with the screen once `done` holds. An Enter
   * that comes while the command popup is still opening leaves the command in the composer: it is
   * pressed again for as long as the composer holds it.
   */
  async command(command: string, done: (screen: string) => boolean, timeoutMs = 30_000): Promise<string> {
    this.type(command);
    await this.shows(`› ${command}`);
    let pressed = 0;
    return this.until(
      (s) => {
        if (done(s)) return true;
        if (s.includes(`› ${command}`) && Date.now() - pressed > 1_000) {
          this.press("Enter");
          pressed = Date.now();
        }
        return false;
      },
      `ran ${command}`,
      timeoutMs,
    );
  }

  /**
   * Picks the row of a selection list (`› 2. • Scout …`) whose label is `label`: Down until it is
   * the selected one (once per move seen on screen, again if one seems lost), then Enter; resolves
   * once the list (the screen showing `list`) is gone.
   */
  async pick(label: string, list: string, timeoutMs = 30_000): Promise<string> {
    const selected = new RegExp(`›\\s+\\d+\\.\\s+(?:•\\s+)?${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`);
    let pressedOn: string | undefined;
    let pressedAt = 0;
    await this.until(
      (s) => {
        if (selected.test(s)) return true;
        const current = /^.*›\s+\d+\..*$/m.exec(s)?.[0];
        if (current !== undefined && (current !== pressedOn || Date.now() - pressedAt > 2_000)) {
          this.press("Down");
          pressedOn = current;
          pressedAt = Date.now();
        }
        return false;
      },
      `selected ${JSON.stringify(label)}`,
      timeoutMs,
    );
    this.press("Enter");
    return this.hides(list, timeoutMs);
  }

  /** Ends the UI at once, as a closed laptop lid or a lost terminal does. */
  kill(): void {
    try {
      // Quietly: a session killed twice (by the test, then by its clean-up) is already gone.
      execFileSync("tmux", ["-L", SOCKET, "kill-session", "-t", this.session], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }

  /** Resolves with the screen once `holds` is true of it (`what` names the wait in the error). */
  async until(holds: (screen: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (holds(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`the screen never ${what}:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
