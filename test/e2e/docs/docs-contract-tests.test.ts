import { cpSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { repoRoot } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { clientRepository, runShell, startGatewayShell, type ClientRepository } from "../../support/doc-shell.js";
import { docBlock, shellCommands } from "../../support/docs.js";

/**
 * docs/contract-tests.md as a client repository follows it, in one such repository with the package
 * installed: it records a gateway's connections and the spawned commands' sessions, validates them
 * with each documented format, and compares Codex schemas with each documented `schema diff` line
 * (the two Codex releases of the page are test/fixtures', which `generate-json-schema --out` wrote).
 * The install lines run in package-install.test.ts.
 */

const cleanups = cleanupsAfterEach();

async function shellOk(repo: ClientRepository, line: string, stdin = "") {
  const result = await runShell(repo, line, stdin);
  expect(result.code, `${line}\n${result.stderr}`).toBe(0);
  return result;
}

/** "1. Record": the serve line (on a free port), an Ask and a Codex client, then SIGTERM. */
async function record(repo: ClientRepository): Promise<string[]> {
  const [serve, ...rest] = shellCommands(docBlock("docs/contract-tests.md", "node_modules/.bin/tau-gateway serve --port 8080 --record recordings/"));
  expect(rest).toEqual([]);
  expect(serve).toContain("--port 8080");
  const gateway = await startGatewayShell(repo, serve!.replace("--port 8080", "--port 0"), cleanups);
  const ws = gateway.baseUrl.replace("http://", "ws://");
  const ask = await AskTestClient.websocket(`${ws}/rpc`);
  await ask.request("initialize", { client: { name: "docs", version: "1" } });
  await ask.request("session/create", {});
  ask.socket.close();
  const codex = await CodexTestClient.websocket(ws);
  await codex.initialize();
  await codex.request("thread/start", {});
  codex.socket.close();
  // "then stop the gateway (SIGTERM): every recording is complete once it has exited"
  gateway.child.kill("SIGTERM");
  expect(await gateway.exit).toEqual({ code: 0, signal: null });
  return readdirSync(join(repo.dir, "recordings")).sort();
}

describe("docs/contract-tests.md", () => {
  // Four real `npx` runs (npm starts, then the bin): the slowest test of the docs.
  it("records a gateway's connections, one file per connection headed as shown, and each validate line passes them", { timeout: 180_000 }, async () => {
    const repo = clientRepository(cleanups);
    const files = await record(repo);
    expect(files.map((f) => f.replace(/-.*/, ""))).toEqual(["ask", "codex"]);
    const connection = /^codex-(\d{8}T\d{6}Z-\d+-\d{4})\.jsonl$/.exec(files[1]!)?.[1];
    expect(connection, `named by dialect and connection: ${files[1]}`).toBeDefined();

    // The shown lines, `{…}` standing for what a message holds, have the recording's fields.
    const shown = docBlock("docs/contract-tests.md", '{"recording":{"format":1,"dialect":"codex"')
      .split("\n")
      .map((line) => JSON.parse(line.replaceAll("{…}", "{}")) as Record<string, any>);
    const recorded = readFileSync(join(repo.dir, "recordings", files[1]!), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>);
    expect(Object.keys(recorded[0]!.recording).sort()).toEqual(Object.keys(shown[0]!.recording).sort());
    expect(recorded[0]!.recording).toMatchObject({ format: shown[0]!.recording.format, dialect: "codex", connection, transport: shown[0]!.recording.transport });
    for (const [index, line] of shown.slice(1).entries()) {
      const actual = recorded[index + 1]!;
      expect(Object.keys(actual).sort()).toEqual(Object.keys(line).sort());
      expect({ direction: actual.direction, id: actual.message.id, method: actual.message.method }).toEqual({ direction: line.direction, id: line.message.id, method: line.message.method });
    }

    // "2. Validate", each line as written.
    const validate = shellCommands(docBlock("docs/contract-tests.md", "npx tau-gateway validate recordings/*.jsonl"));
    expect(validate).toHaveLength(4);
    const outputs = [];
    for (const line of validate) outputs.push(await shellOk(repo, line));
    const messages = recorded.length - 1 + readFileSync(join(repo.dir, "recordings", files[0]!), "utf8").trimEnd().split("\n").length - 1;
    expect(outputs[0]!.stdout).toBe(`${messages} valid, 0 invalid\n`);
    expect(outputs[1]!.stdout).toContain(`${messages} valid, 0 invalid`);
    expect(readFileSync(join(repo.dir, "junit.xml"), "utf8")).toMatch(/^<\?xml[\s\S]*<testsuites[\s\S]*failures="0"/);
    expect(JSON.parse(readFileSync(join(repo.dir, "validate.sarif"), "utf8"))).toMatchObject({ version: "2.1.0", runs: [{ results: [] }] });
  });

  it("the spawned commands record their session into the file given", async () => {
    const repo = clientRepository(cleanups);
    const lines = shellCommands(docBlock("docs/contract-tests.md", "tau-gateway app-server --record codex-session.jsonl"));
    // What each client sends first; each command ends with its input.
    const first: Record<string, unknown> = {
      "app-server": { id: 1, method: "initialize", params: { clientInfo: { name: "docs", version: "1" } } },
      acp: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
      stdio: { jsonrpc: "2.0", id: 1, method: "initialize", params: { client: { name: "docs", version: "1" } } },
    };
    expect(lines.map((line) => line.split(" ")[1])).toEqual(Object.keys(first));
    for (const line of lines) {
      const run = await shellOk(repo, line, `${JSON.stringify(first[line.split(" ")[1]!])}\n`);
      expect(JSON.parse(run.stdout.split("\n")[0]!), line).toMatchObject({ id: 1, result: expect.any(Object) });
      const file = /--record (\S+)/.exec(line)![1]!;
      const dialect = { "app-server": "codex", acp: "acp", stdio: "ask" }[line.split(" ")[1]!];
      const recorded = readFileSync(join(repo.dir, file), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
      expect(recorded[0], line).toEqual({ recording: expect.objectContaining({ format: 1, dialect }) });
      expect(recorded.slice(1).map((l: { direction: string }) => l.direction), line).toEqual(["client", "server"]);
      expect((await runShell(repo, `tau-gateway validate ${file}`)).stdout, line).toBe("2 valid, 0 invalid\n");
    }
  });

  it("schema diff: each line says what the page says, and the page's report is an excerpt of 0.169.0 → 0.171.0's", async () => {
    const repo = clientRepository(cleanups);
    for (const release of ["0.169.0", "0.171.0"]) cpSync(join(repoRoot, "test/fixtures", `codex-${release}`), join(repo.dir, `codex-${release}`), { recursive: true });
    // An app that pinned this version's bundle: OLD is the installed one.
    mkdirSync(join(repo.dir, "old"));
    cpSync(join(repo.dir, "node_modules/tau-gateway/schema/codex-v2.schema.json"), join(repo.dir, "old/codex-v2.schema.json"));
    const [installed, generate, client, server, ...rest] = shellCommands(docBlock("docs/contract-tests.md", "tau-gateway schema diff old/codex-v2.schema.json"));
    expect(rest).toEqual([]);
    expect((await shellOk(repo, installed!)).stdout).toBe("0 breaking, 0 additive\n");
    // The new release's own schema: 0.171.0's, as its generate-json-schema wrote it.
    expect(generate).toBe("codex app-server generate-json-schema --out codex-new");
    cpSync(join(repo.dir, "codex-0.169.0"), join(repo.dir, "codex-old"), { recursive: true });
    cpSync(join(repo.dir, "codex-0.171.0"), join(repo.dir, "codex-new"), { recursive: true });
    const asClient = await runShell(repo, client!);
    expect({ code: asClient.code, totals: asClient.stdout.trimEnd().split("\n").at(-1) }).toEqual({ code: 1, totals: "1 breaking, 18 additive" });

    const [methods, served, ...more] = shellCommands(docBlock("docs/contract-tests.md", "node -e 'for (const e of require(\"tau-gateway/schema/index.json\")"));
    expect(more).toEqual([]);
    await shellOk(repo, methods!);
    const names = readFileSync(join(repo.dir, "served-methods.txt"), "utf8").trimEnd().split("\n");
    expect(names).toEqual(expect.arrayContaining(["initialize", "thread/start", "turn/start", "item/completed"]));
    const asServer = await runShell(repo, server!);
    const servedRun = await runShell(repo, served!);
    // The same releases under both names: the same report.
    expect(servedRun).toEqual(asServer);
    expect(asServer.code).toBe(1);
    expect(asServer.stdout.trimEnd().split("\n").at(-1)).toMatch(/^\d+ breaking, \d+ must-honour, \d+ may-emit, \d+ obsolete$/);

    // The report shown: its lines, in order, `…` for lines or words left out.
    const report = docBlock("docs/contract-tests.md", "…\nadditive request thread/list /params/includedThreadIds");
    const pattern = report
      .split("\n")
      .map((line) => (line === "…" ? "(?:.*\\n)*?" : `${line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*?")}\\n`))
      .join("");
    expect(asClient.stdout).toMatch(new RegExp(`(?:^|\\n)${pattern}$`));
  });
});
