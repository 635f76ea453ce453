import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { escapeData, escapeProperty } from "../../src/cli/validate-reports/github.js";
import { xml } from "../../src/cli/validate-reports/junit.js";
import { runCommand } from "../support/cli.js";

/**
 * `validate --format github|junit|sarif`, the formats CI systems show inline: a corrupted line is
 * one annotation, one JUnit failure, one SARIF result; names and messages are escaped as each
 * format's reader unescapes them; exit statuses are those of the text format.
 */

let dir: string;
const file = async (name: string, lines: unknown[]) => {
  const path = join(dir, name);
  await writeFile(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
};

const ping = { direction: "client", message: { jsonrpc: "2.0", id: 1, method: "ping" } };
const pong = { direction: "server", message: { jsonrpc: "2.0", id: 1, result: { status: "ok", version: "1", protocolVersion: "1.0", uptime: 1, sessions: 0 } } };
/** One corrupted line between two valid ones. */
const corrupted = [ping, '{"direction":"server","message":{"jsonrpc":"2.0","id":1,"result":', pong];
/** A line with two issues: neither sessionId nor content is a string. */
const twoIssues = { direction: "client", message: { jsonrpc: "2.0", id: 2, method: "session/send", params: { sessionId: 5, content: 42 } } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tau-gateway-validate-formats-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("validate --format github", () => {
  it("prints one annotation on the corrupted line, then the totals, and exits 1", async () => {
    const path = await file("corrupted.jsonl", corrupted);
    const r = await runCommand(["validate", "--format", "github", path]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^::error file=${escapeProperty(path).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")},line=2,title=invalid \\?::/: not valid JSON: `));
    expect(lines[1]).toBe("2 valid, 1 invalid");
  });

  it("escapes %, CR and LF in the message, and also : and , in properties", async () => {
    expect(escapeData("50% done\r\nnext")).toBe("50%25 done%0D%0Anext");
    expect(escapeProperty("a,b: c%\n")).toBe("a%2Cb%3A c%25%0A");
    const path = await file("odd, name: 100%.jsonl", [twoIssues]);
    const r = await runCommand(["validate", "--format", "github", "--dialect", "ask", path]);
    const [annotation] = r.stdout.split("\n");
    expect(annotation).toBe(
      `::error file=${join(dir, "odd%2C name%3A 100%25.jsonl")},line=1,title=invalid ask session/send::/params/sessionId: must be of type string%0A/params/content: must be of type string`,
    );
  });

  it("prints only the totals for a valid transcript and exits 0", async () => {
    const r = await runCommand(["validate", "--format", "github", await file("valid.jsonl", [ping, pong])]);
    expect(r).toMatchObject({ code: 0, stdout: "2 valid, 0 invalid\n" });
  });
});

describe("validate --format junit", () => {
  it("writes a suite per file and a case per message, with one failure for the corrupted line", async () => {
    const bad = await file("junit-bad.jsonl", corrupted);
    const good = await file("junit-good.jsonl", [ping, "", pong]);
    const r = await runCommand(["validate", "--format", "junit", bad, good]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("4 valid, 1 invalid\n");
    expect(r.stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="tau-gateway validate" tests="5" failures="1" errors="0">\n')).toBe(true);
    expect(r.stdout.endsWith("</testsuites>\n")).toBe(true);
    expect(r.stdout).toContain(`<testsuite name="${bad}" tests="3" failures="1" errors="0" skipped="0">`);
    expect(r.stdout).toContain(`<testsuite name="${good}" tests="2" failures="0" errors="0" skipped="0">`);
    expect(r.stdout.match(/<testcase /g)).toHaveLength(5);
    expect(r.stdout.match(/<failure /g)).toHaveLength(1);
    expect(r.stdout).toContain(`<testcase classname="${bad}" name="line 1: ask ping" file="${bad}" line="1"/>`);
    expect(r.stdout).toMatch(new RegExp(`<testcase classname="[^"]+" name="line 2: \\?" file="[^"]+" line="2">\\n      <failure message="/: not valid JSON: [^"]*" type="json">/: not valid JSON: `));
    expect(r.stdout).toContain(`name="line 3: ask ping" file="${good}" line="3"/>`);
  });

  it("lists every issue of a line in its one failure, escaped for XML", async () => {
    const path = await file("junit-<two> & 'issues'.jsonl", [twoIssues]);
    const r = await runCommand(["validate", "--format", "junit", "--dialect", "ask", path]);
    const name = xml(path);
    expect(name).toContain("&lt;two&gt; &amp; &apos;issues&apos;");
    expect(r.stdout).toContain(
      `<testcase classname="${name}" name="line 1: ask session/send" file="${name}" line="1">\n` +
        `      <failure message="/params/sessionId: must be of type string" type="type">/params/sessionId: must be of type string&#10;/params/content: must be of type string</failure>`,
    );
  });

  it("writes characters XML cannot carry as \\u escapes, keeping the document well-formed", () => {
    expect(xml('a\u0000b\u001bc "d" <e>\n\t\uD800')).toBe("a\\u0000b\\u001bc &quot;d&quot; &lt;e&gt;&#10;&#9;\\ud800");
    expect(xml("😀 ok")).toBe("😀 ok");
  });

  it("exits 0 with every case passing for a valid transcript", async () => {
    const r = await runCommand(["validate", "--format", "junit", await file("junit-valid.jsonl", [ping, pong])]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("<failure");
    expect(r.stderr).toBe("2 valid, 0 invalid\n");
  });
});

describe("validate --format sarif", () => {
  it("writes a SARIF 2.1.0 log with a result per issue at its line", async () => {
    const path = await file("sarif.jsonl", [ping, twoIssues, corrupted[1]!]);
    const r = await runCommand(["validate", "--format", "sarif", "--dialect", "ask", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("1 valid, 2 invalid\n");
    const log = JSON.parse(r.stdout);
    expect(log.version).toBe("2.1.0");
    expect(log.runs).toHaveLength(1);
    const [run] = log.runs;
    expect(run.tool.driver.name).toBe("tau-gateway validate");
    const ruleIds = run.tool.driver.rules.map((rule: { id: string }) => rule.id);
    const at = (line: number) => [{ physicalLocation: { artifactLocation: { uri: pathToFileURL(path).href }, region: { startLine: line } } }];
    expect(run.results).toEqual([
      { ruleId: "schema", level: "error", message: { text: "ask session/send: /params/sessionId: must be of type string" }, locations: at(2), properties: { pointer: "/params/sessionId", dialect: "ask", subject: "session/send" } },
      { ruleId: "schema", level: "error", message: { text: "ask session/send: /params/content: must be of type string" }, locations: at(2), properties: { pointer: "/params/content", dialect: "ask", subject: "session/send" } },
      { ruleId: "not-json", level: "error", message: { text: expect.stringMatching(/^\?: \/: not valid JSON/) }, locations: at(3), properties: { pointer: "", dialect: null, subject: null } },
    ]);
    for (const result of run.results) expect(ruleIds).toContain(result.ruleId);
  });
});

describe("validate --format", () => {
  it("still refuses an unknown format with exit status 2, naming the formats", async () => {
    const r = await runCommand(["validate", "--format", "xml", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--format must be text, json, github, junit, sarif");
  });
});
