import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { repoRoot } from "../../support/cli.js";
import { clientRepository, runShell, startShell } from "../../support/doc-shell.js";
import { docBlock, shellCommands } from "../../support/docs.js";
import { startHttpGateway } from "../../support/http-gateway.js";

/**
 * The README's examples (and docs/ask.md's copy of the Ask one) do what the README says they do,
 * run as written against the gateway as `npm start` serves it (the embedded host), with the
 * gateway's address put in for `localhost:8080`. The Zed settings run in
 * docs-editor-config.test.ts, the AI SDK script in interop/test/ai-sdk-provider.test.ts, the
 * install lines in package-install.test.ts.
 */

const cleanups = cleanupsAfterEach();

/** The README's paragraph that starts with `**label**`, up to the next such paragraph or heading. */
function example(label: string): string {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const start = readme.indexOf(`\n**${label}**`);
  expect(start, `README has a ${label} example`).toBeGreaterThan(-1);
  const end = readme.slice(start + 1).search(/\n(\*\*|## )/);
  return readme.slice(start, end === -1 ? undefined : start + 1 + end);
}

const askBlocks: Array<[string, () => string]> = [
  ["README.md", () => docBlock("README.md", "curl -s localhost:8080/rpc")],
  ["docs/ask.md", () => docBlock("docs/ask.md", "curl -s localhost:8080/rpc")],
];

describe("the README's examples", () => {
  for (const [page, askBlock] of askBlocks) {
    it(`${page}, Ask over HTTP: the curl commands create a session and send Hello, and the event stream shows the turn`, async () => {
      const gw = await cleanups.stopAfterTest(startHttpGateway());
      const repo = clientRepository(cleanups);
      const host = gw.baseUrl.replace(/^http:\/\//, "");
      const [create, events, send, ...rest] = shellCommands(askBlock()).map((line) => line.replaceAll("localhost:8080", host));
      expect(rest).toEqual([]);

      const created = await runShell(repo, create!);
      expect(created.code, created.stderr).toBe(0);
      const sessionId = JSON.parse(created.stdout).result.session.sessionId as string;
      // "in another terminal": it runs on while the next command runs.
      const stream = startShell(repo, events!.replaceAll("SESSION_ID", sessionId), cleanups);
      await stream.waitFor("stdout", /"session\.created"/);
      const sent = await runShell(repo, send!.replaceAll("SESSION_ID", sessionId));
      expect(sent.code, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout).result).toMatchObject({ accepted: true });
      await stream.waitFor("stdout", /"turn\.completed"/);

      const frames = [...stream.stdout().matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { event: { type: string; payload: { delta?: string } } });
      const types = frames.map((f) => f.event.type);
      // "The event stream then shows `turn.started`, `model.streaming` with `You said: Hello`, and `turn.completed`."
      const shown = /event stream then shows `([^`]+)`,\s+`([^`]+)`\s+with\s+`([^`]+)`,\s+and\s+`([^`]+)`/.exec(example("Ask"))!;
      expect(types).toEqual(expect.arrayContaining([shown[1], shown[2], shown[4]]));
      const streamed = frames.filter((f) => f.event.type === shown[2]).map((f) => f.event.payload.delta).join("");
      expect(streamed).toBe(shown[3]);
    });
  }

  it("Tau: the script creates a session, submits Hello and prints what the README says it prints", async () => {
    const gw = await cleanups.stopAfterTest(startHttpGateway());
    const text = example("Tau");
    const script = docBlock("README.md", "import WebSocket from \"ws\";");
    expect(script).toContain("ws://127.0.0.1:8080/tau");
    // Run where the README says to run it: beside this checkout's node_modules, for `ws`.
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "readme-tau-")));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
    writeFileSync(join(dir, "tau-hello.mjs"), script.replace("ws://127.0.0.1:8080", gw.baseUrl.replace(/^http:/, "ws:")));

    const child = spawn(process.execPath, [join(dir, "tau-hello.mjs")], { cwd: gw.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });

    const printed = /this prints\s+`([^`]+)`\s+and\s+`([^`]+)`/.exec(text)!;
    expect(stdout).toBe(`${printed[1]}\n${printed[2]}\n`);
  });
});
