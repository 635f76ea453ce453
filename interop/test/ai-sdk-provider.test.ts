import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateText, streamText } from "ai";
import { createCodexAppServer } from "ai-sdk-provider-codex-app-server";
import { afterEach, describe, expect, it } from "vitest";
import { interopRoot, interopRun, officialProblems, sentMethods, TAU_GATEWAY, type InteropRun } from "./support/gateway-process.js";
import { startServe } from "./support/gateway-servers.js";
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
    const script = docBlock("README.md", "import { generateText } from \"ai\";");
    // The gateway as the README starts it for the Codex terminal UI just before: with the token the script sends.
    const token = /TAU_GATEWAY_TOKEN=(\S+) npm start/.exec(readme)![1]!;
    const gateway = await startServe([], { TAU_GATEWAY_TOKEN: token });
    // Beside this package's node_modules (ai, the provider); the README's codexPath is the installed bin, here this checkout's.
    const dir = mkdtempSync(join(interopRoot, ".readme-ai-"));
    try {
      expect(script).toContain('codexPath: "node_modules/.bin/tau-gateway"');
      writeFileSync(join(dir, "ai-hello.mjs"), script.replace('"node_modules/.bin/tau-gateway"', JSON.stringify(TAU_GATEWAY)).replace("ws://127.0.0.1:8080", gateway.url));
      const child = spawn(process.execPath, [join(dir, "ai-hello.mjs")], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect({ code, stdout, stderr: stderr.split("\n").filter((l) => /error/i.test(l)) }).toEqual({ code: 0, stdout: "You said: Hello\n", stderr: [] });
      // It worked on the running gateway's sessions: the turn is that gateway's.
      expect(gateway.stderr()).not.toMatch(/"level":50/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await gateway.kill();
    }
  });
});
