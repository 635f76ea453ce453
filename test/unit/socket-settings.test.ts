import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readSettings, socketSettings } from "../../src/cli/settings.js";
import { run } from "../../src/cli/run.js";
import { runCommand } from "../support/cli.js";

/** The socket settings (`--socket`, `--socket-mode`) and where `stdio` reads them from, including the Ask host's own variable. */

const stdioSpecs = { socket: { ...socketSettings.socket, alsoEnv: "ASK_APP_SERVER_SOCKET" }, socketMode: socketSettings.socketMode };

async function stdioRefuses(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await run(["stdio", ...argv], { stdin: Readable.from([]), stdout: () => undefined, stderr: (text) => void (stderr += text) }, env);
  return { code, stderr };
}

describe("socket settings", () => {
  it("takes the flag, else TAU_GATEWAY_SOCKET, else ASK_APP_SERVER_SOCKET (an empty variable counts as unset), made absolute", () => {
    const env = { TAU_GATEWAY_SOCKET: "/run/ours.sock", ASK_APP_SERVER_SOCKET: "/run/ask.sock" };
    expect(readSettings(["--socket", "/run/flag.sock"], env, stdioSpecs).socket).toBe("/run/flag.sock");
    expect(readSettings([], env, stdioSpecs).socket).toBe("/run/ours.sock");
    expect(readSettings([], { ...env, TAU_GATEWAY_SOCKET: "" }, stdioSpecs).socket).toBe("/run/ask.sock");
    expect(readSettings([], {}, stdioSpecs).socket).toBeUndefined();
    expect(readSettings(["--socket", "relative.sock"], {}, stdioSpecs).socket).toBe(`${process.cwd()}/relative.sock`);
    // serve reads only its own variable.
    expect(readSettings([], { ASK_APP_SERVER_SOCKET: "/run/ask.sock" }, socketSettings).socket).toBeUndefined();
  });

  it("reads the mode in octal, 0600 by default", () => {
    expect(readSettings([], {}, stdioSpecs).socketMode).toBe(0o600);
    for (const text of ["660", "0660", "0o660"]) expect(readSettings(["--socket-mode", text], {}, stdioSpecs).socketMode).toBe(0o660);
  });

  it("refuses a bad mode or a path too long for a socket, naming the setting as written (exit 2)", async () => {
    const mode = await stdioRefuses(["--socket-mode", "0x600"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/invalid --socket-mode "0x600": must be an octal file mode/);
    const long = await stdioRefuses([], { ASK_APP_SERVER_SOCKET: `/tmp/${"s".repeat(200)}.sock` });
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/invalid ASK_APP_SERVER_SOCKET ".*": is too long for a Unix socket/);
    const served = await runCommand(["serve", "--socket-mode", "1777"]);
    expect(served.code).toBe(2);
    expect(served.stderr).toMatch(/invalid --socket-mode/);
  });
});
