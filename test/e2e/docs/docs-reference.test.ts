import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { repoRoot } from "../../support/cli.js";
import { clientRepository, runShell } from "../../support/doc-shell.js";
import { docBlock } from "../../support/docs.js";

/**
 * The reference pages' blocks as written, in a client repository with the package installed:
 * validate.md's usage line and output, ask.md's transcript (every message of it valid as shown),
 * schema.md's ajv and TypeScript snippets (run, and type-checked), development.md's map (every
 * folder it names exists).
 */

const cleanups = cleanupsAfterEach();

describe("docs/validate.md", () => {
  it("its usage line is the command's, and its output is what the command prints for such a file", async () => {
    const repo = clientRepository(cleanups);
    const help = await runShell(repo, "tau-gateway validate --help");
    expect(help.stdout.split("\n")[0]).toBe(`usage: ${docBlock("docs/validate.md", "tau-gateway validate [--dialect")}`);

    // A transcript of 43 lines, mixed dialects (detected per line), the two errors at the lines shown.
    const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
    const lines = Array.from({ length: 43 }, (_, i) => ping(100 + i));
    lines[6] = JSON.stringify({ version: 18, type: "request", id: "1", method: "session.exec", params: { sessionId: "s", execId: "e", command: "ls", maxCaptureBytes: 99_999_999 } });
    lines[7] = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/send", params: { sessionId: "s", content: "hi" } });
    lines[8] = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { accepted: true, status: "bogus", turnId: "t" } });
    writeFileSync(join(repo.dir, "recorded.jsonl"), `${lines.join("\n")}\n`);
    const run = await runShell(repo, "tau-gateway validate recorded.jsonl");
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: `${docBlock("docs/validate.md", "recorded.jsonl:7: tau session.exec")}\n` });
  });
});

describe("docs/ask.md", () => {
  it("the session's transcript is valid Ask, each message in the direction shown", async () => {
    const repo = clientRepository(cleanups);
    const transcript = docBlock("docs/ask.md", '-> {"jsonrpc":"2.0","id":1,"method":"initialize"').split("\n");
    const lines = transcript.map((line) => {
      const direction = /^(->|<-) /.exec(line)?.[1];
      expect(direction, line).toBeDefined();
      return JSON.stringify({ direction: direction === "->" ? "client" : "server", message: JSON.parse(line.slice(3)) });
    });
    const run = await runShell(repo, "tau-gateway validate --dialect ask -", `${lines.join("\n")}\n`);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: `${lines.length} valid, 0 invalid\n` });
  });
});

describe("docs/schema.md", () => {
  // tsc loads the whole TypeScript compiler: seconds on an idle machine, tens under load.
  it("the ajv snippet compiles the bundle's ClientMessage and it checks a message; the types snippet type-checks", { timeout: 90_000 }, async () => {
    const repo = clientRepository(cleanups);
    const ajv = docBlock("docs/schema.md", 'import { Ajv2019 } from "ajv/dist/2019.js";');
    const check = `
const good = { version: 18, type: "request", id: "1", method: "session.list", params: {} };
console.log(JSON.stringify([validateRequest(good), validateRequest({ ...good, method: "nope" })]));`;
    writeFileSync(join(repo.dir, "check.mjs"), ajv + check);
    // ajv is a dependency of the package: npm puts it beside it (hoisted), where the snippet imports it from.
    symlinkSync(join(repoRoot, "node_modules/ajv"), join(repo.dir, "node_modules/ajv"), "dir");
    const run = await runShell(repo, "node check.mjs");
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: "[true,false]\n", stderr: "" });

    const types = docBlock("docs/schema.md", 'import type { ClientRequests } from "tau-gateway/generated/tau-v18.js";');
    writeFileSync(join(repo.dir, "call.ts"), `${types}\nexport declare const call: Call;\nexport const listed = call("session.list", {});\n// @ts-expect-error a method the host does not have\ncall("session.nope", {});\n`);
    const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
    const typed = await runShell(repo, `node ${tsc} --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --skipLibCheck call.ts`);
    expect({ code: typed.code, out: typed.stdout + typed.stderr }).toEqual({ code: 0, out: "" });
  });
});

describe("docs/development.md", () => {
  it("every folder of the map exists", () => {
    const map = docBlock("docs/development.md", "src/shared/");
    const folders = [...map.matchAll(/^(\S+\/)\s/gm)].map((m) => m[1]!);
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((folder) => !existsSync(join(repoRoot, folder)))).toEqual([]);
  });
});
