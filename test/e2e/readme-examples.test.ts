import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { repoRoot } from "../support/cli.js";
import { postRpc, startHttpGateway } from "../support/http-gateway.js";
import { SseTestClient } from "../support/sse-client.js";

/**
 * The README's Ask and Tau examples do what the README says they do, run against the gateway as
 * `npm start` serves it (the embedded host): its requests and its script are taken from the README,
 * with the gateway's address put in for `localhost:8080`.
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

/** The first fenced block of `language` in `text`. */
function block(text: string, language: string): string {
  const open = text.indexOf(`\`\`\`${language}\n`);
  expect(open, `a ${language} block`).toBeGreaterThan(-1);
  return text.slice(open + language.length + 4, text.indexOf("\n```", open));
}

describe("the README's examples", () => {
  it("Ask over HTTP: the curl requests create a session and send Hello, and the event stream shows the turn", async () => {
    const gw = await cleanups.stopAfterTest(startHttpGateway());
    const text = example("Ask");
    const commands = block(text, "sh");
    const bodies = [...commands.matchAll(/-d '([^']*)'/g)].map((m) => m[1]!);
    expect(bodies).toHaveLength(2);

    const created = await postRpc(gw.baseUrl, bodies[0]!);
    expect(created.status).toBe(200);
    const sessionId = created.body.result.session.sessionId as string;
    const eventsPath = /curl -N "localhost:8080(\/rpc\/events\?sessionId=)SESSION_ID"/.exec(commands)![1]!;
    const stream = await SseTestClient.open(`${gw.baseUrl}${eventsPath}${sessionId}`);
    cleanups.push(() => stream.close());
    expect(stream.status).toBe(200);

    const sent = await postRpc(gw.baseUrl, bodies[1]!.replaceAll("SESSION_ID", sessionId));
    expect(sent.body.result).toMatchObject({ accepted: true });
    await stream.waitForEvent("turn.completed");
    const events = stream.events().map((e) => e.event);
    const types = events.map((e) => e.type);
    // "The event stream then shows `turn.started`, `model.streaming` with `You said: Hello`, and `turn.completed`."
    const shown = /event stream then shows `([^`]+)`,\s+`([^`]+)`\s+with\s+`([^`]+)`,\s+and\s+`([^`]+)`/.exec(text)!;
    expect(types.filter((type) => type !== "session.created")).toEqual(expect.arrayContaining([shown[1], shown[2], shown[4]]));
    const streamed = events.filter((e) => e.type === shown[2]).map((e) => e.payload.delta as string).join("");
    expect(streamed).toBe(shown[3]);
  });

  it("Tau: the script creates a session, submits Hello and prints what the README says it prints", async () => {
    const gw = await cleanups.stopAfterTest(startHttpGateway());
    const text = example("Tau");
    const script = block(text, "js");
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
