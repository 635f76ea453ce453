import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateText, streamText } from "ai";
import { createCodexAppServer } from "ai-sdk-provider-codex-app-server";
import { afterEach, describe, expect, it } from "vitest";
import { interopRoot, interopRun, officialProblems, sentMethods, TAU_GATEWAY, type InteropRun } from "./support/gateway-process.js";
import { printed, startServe, tauGateway } from "./support/gateway-servers.js";
import { docBlock } from "../../test/support/docs.js";

/**
 * The Vercel AI SDK (`ai` 6) through `ai-sdk-provider-codex-app-server` 1.1.7, whose `codexPath`
 * is tau-gateway: the provider spawns `<codexPath> app-server` and speaks NDJSON to it, which the
 * gateway serves from its embedded Tau host (the scripted agent answers "You said: …").
 */

let run: InteropRun;
const providers: Array<{ dispose(): void }> = [];

afterEach(() => {
  for (const model of providers.splice(0)) model.dispose();
  run?.cleanup();
});

function model(settings: Record<string, unknown> = {}) {
  run = interopRun();
  const provider = createCodexAppServer({ defaultSettings: { codexPath: TAU_GATEWAY, cwd: run.cwd, env: run.env, logger: false, ...settings } });
  const languageModel = provider("default");
  providers.push(languageModel as unknown as { dispose(): void });
  return languageModel;
}

describe("ai-sdk-provider-codex-app-server with tau-gateway as its Codex", () => {
  it("generateText: the agent's text", async () => {
    const result = await generateText({ model: model(), prompt: "Hello from the AI SDK" });
    expect(result.text).toContain("You said: Hello from the AI SDK");
    expect(sentMethods(run)).toContain("turn/completed");
    expect(officialProblems(run)).toEqual([]);
  });

  it("streamText: thinking as reasoning, then the text", async () => {
    const result = streamText({ model: model(), prompt: "/think considering the question\nStreamed answer" });
    let reasoning = "";
    let text = "";
    for await (const part of result.fullStream) {
      if (part.type === "reasoning-delta") reasoning += part.text;
      if (part.type === "text-delta") text += part.text;
    }
    expect(reasoning).toContain("considering the question");
    expect(text).toContain("You said: Streamed answer");
    expect(officialProblems(run)).toEqual([]);
  });

  it("streamText with approvalMode never: a command tool runs without a request and shows as a tool call and result", async () => {
    const result = streamText({ model: model({ approvalMode: "never" }), prompt: '/tool echo-args {"x":42}\nAfter the tool' });
    const calls: unknown[] = [];
    const results: unknown[] = [];
    let text = "";
    for await (const part of result.fullStream) {
      if (part.type === "tool-call") calls.push(part);
      if (part.type === "tool-result") results.push(part);
      if (part.type === "text-delta") text += part.text;
    }
    expect(calls).toEqual([expect.objectContaining({ toolName: "exec", input: expect.objectContaining({ command: expect.stringContaining("cat <<< ") }) })]);
    expect(results).toEqual([expect.objectContaining({ toolName: "exec", output: expect.objectContaining({ aggregatedOutput: '{"x":42}', exitCode: 0, status: "completed" }) })]);
    expect(text).toContain("After the tool");
    expect(sentMethods(run)).not.toContain("item/commandExecution/requestApproval");
    expect(officialProblems(run)).toEqual([]);
  });

  it("the README's example, as written: relays to the running gateway with its token, prints the answer and exits", async () => {
    const readme = readFileSync(join(interopRoot, "..", "README.md"), "utf8");
    // The gateway as the README starts it for the Codex terminal UI just before: with the token the script sends.
    const token = /TAU_GATEWAY_TOKEN=(\S+) npm start/.exec(readme)![1]!;
    const script = docBlock("README.md", "import { generateText } from \"ai\";");
    expect(script).toContain('codexPath: "node_modules/.bin/tau-gateway"');
    await relayedScript(script, '"node_modules/.bin/tau-gateway"', token);
  });

  it("docs/remote.md's example, as written: relays to the running gateway with its token, prints the answer and exits", async () => {
    const script = docBlock("docs/remote.md", "import { generateText } from \"ai\";");
    expect(script).toContain('codexPath: "/path/to/node_modules/.bin/tau-gateway"');
    await relayedScript(script, '"/path/to/node_modules/.bin/tau-gateway"', /TAU_GATEWAY_REMOTE_TOKEN: "([^"]+)"/.exec(script)![1]!);
  });

  it("docs/codex.md's example, as written: on the Tau host it names, with the command tools of the file it names", async () => {
    const script = docBlock("docs/codex.md", "import { generateText } from \"ai\";");
    const host = tauGateway(["host", "--port", "0"]);
    const dir = mkdtempSync(join(interopRoot, ".docs-ai-"));
    try {
      const hostUrl = await printed(host, /^tau host listening on (ws:\/\/\S+)$/m, "the Tau host");
      const tools = join(dir, "tools.json");
      writeFileSync(tools, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its arguments.", parameters: { type: "object" }, command: "cat" }] }));
      expect(script).toContain('"ws://tau-host:8787"');
      expect(script).toContain('"/etc/tools.json"');
      const run = await runScript(dir, script.replace('"node_modules/.bin/tau-gateway"', JSON.stringify(TAU_GATEWAY)).replace("ws://tau-host:8787", hostUrl).replace("/etc/tools.json", tools));
      expect({ code: run.code, stdout: run.stdout, errors: run.errors }).toEqual({ code: 0, stdout: "You said: Hello\n", errors: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await host.kill();
    }
  });
});

/** Runs SCRIPT as DIR/script.mjs (beside this package's node_modules: ai, the provider) to its exit. */
async function runScript(dir: string, script: string): Promise<{ code: number | null; stdout: string; errors: string[] }> {
  writeFileSync(join(dir, "script.mjs"), script);
  const child = spawn(process.execPath, [join(dir, "script.mjs")], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, errors: stderr.split("\n").filter((l) => /error/i.test(l)) };
}

/** A script that relays to a running gateway (started with TOKEN): CODEX_PATH replaced by this checkout's bin. */
async function relayedScript(script: string, codexPath: string, token: string): Promise<void> {
  const gateway = await startServe([], { TAU_GATEWAY_TOKEN: token });
  const dir = mkdtempSync(join(interopRoot, ".docs-ai-"));
  try {
    const run = await runScript(dir, script.replace(codexPath, JSON.stringify(TAU_GATEWAY)).replace("ws://127.0.0.1:8080", gateway.url));
    expect({ code: run.code, stdout: run.stdout, errors: run.errors }).toEqual({ code: 0, stdout: "You said: Hello\n", errors: [] });
    // It worked on the running gateway's sessions: the turn is that gateway's.
    expect(gateway.stderr()).not.toMatch(/"level":50/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await gateway.kill();
  }
}
