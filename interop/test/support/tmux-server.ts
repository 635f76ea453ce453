import { execFileSync } from "node:child_process";

/**
 * Global teardown: the run's own tmux server (see codex-tui.ts) is told to outlive its last
 * session, so that a UI killed and another started right after never meet a server on its way
 * out; it goes when the run ends.
 */
export default function setup(): () => void {
  return () => {
    const socket = process.env.TAU_INTEROP_TMUX;
    if (!socket) return;
    try {
      execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    } catch {
      // never started (no UI test ran, or no tmux)
    }
  };
}
