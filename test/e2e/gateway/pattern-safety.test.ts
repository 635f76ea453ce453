import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { check, type Diagnostics } from "recheck";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DIRECTIVE } from "../../../src/host/scripted-agent.js";
import type { SchemaIndex } from "../../../src/registry/schema-index.js";
import { readSchemaFile } from "../../../src/validation/schema-files.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startCliProcess } from "../../support/cli.js";
import { errorOf, TauTestClient } from "../../support/tau-client.js";

/**
 * No string a client sends can stall validation: every `pattern` of every generated bundle is
 * proven linear by a ReDoS analyser (so a new unsafe pattern fails here), the rewritten patterns
 * accept exactly what the old ones did, and a 1 MiB worst case through a real `/tau` socket is
 * answered while the gateway keeps serving.
 */

const cleanups = cleanupsAfterEach();

/** ajv compiles every `pattern` with the `u` flag (its default `unicodeRegExp`). */
const AJV_FLAGS = "u";

// The pure-JS analyser: the same result on every platform, without Java or a native binary.
beforeAll(() => void vi.stubEnv("RECHECK_BACKEND", "pure"));
afterAll(() => void vi.unstubAllEnvs());

/**
 * Starts `tau-gateway ARGS` as its own process (SIGKILLed after the test, which reaches it even when
 * its event loop is stuck) and resolves with the first group of `listening` once its stderr shows it.
 */
async function listeningChild(args: string[], listening: RegExp): Promise<string> {
  return (await startCliProcess(args, listening, cleanups)).address;
}

/** Each distinct pattern of every bundle in schema/, with the JSON pointers that use it. */
function bundlePatterns(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const add = (pattern: string, where: string) => found.set(pattern, [...(found.get(pattern) ?? []), where]);
  const walk = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${pointer}/${i}`));
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      // Values, not schemas: a `pattern` member inside them is data.
      if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
      if (key === "pattern" && typeof value === "string") add(value, at);
      if (key === "patternProperties" && typeof value === "object" && value !== null) for (const p of Object.keys(value)) add(p, at);
      walk(value, at);
    }
  };
  const index = readSchemaFile<SchemaIndex>("index.json");
  for (const bundle of index.bundles) walk(readSchemaFile(bundle.schema), bundle.schema);
  return found;
}

/** "safe" or a one-line reason it is not, with the analyser's attack string when it has one. */
async function verdict(source: string, flags: string): Promise<string> {
  const d: Diagnostics = await check(source, flags, { timeout: 60_000 });
  if (d.status === "safe") return "safe";
  if (d.status === "vulnerable") return `vulnerable: ${d.complexity.summary}, e.g. ${d.attack.pattern}`;
  return `not analysed: ${d.error.kind}${"message" in d.error ? ` (${d.error.message})` : ""}`;
}

describe("pattern safety", () => {
  it("finds the analyser able to flag a superlinear pattern (the former exec command pattern)", async () => {
    expect(await verdict("^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$", AJV_FLAGS)).toMatch(/^vulnerable: 2nd degree polynomial/);
    expect(await verdict("^[^\\r\\n]*\\S[^\\r\\n]*$", AJV_FLAGS)).toMatch(/^vulnerable/);
  }, 60_000);

  it("proves every pattern of every generated bundle linear", async () => {
    const patterns = bundlePatterns();
    // The bundles do use patterns: an empty walk would prove nothing.
    expect(patterns.size).toBeGreaterThan(5);
    const unsafe: Record<string, { verdict: string; usedAt: string[] }> = {};
    for (const [pattern, usedAt] of patterns) {
      const result = await verdict(pattern, AJV_FLAGS);
      if (result !== "safe") unsafe[pattern] = { verdict: result, usedAt: usedAt.slice(0, 3) };
    }
    expect(unsafe).toEqual({});
  }, 120_000);

  it("proves the scripted agent's directive pattern linear (it reads every prompt line)", async () => {
    expect(await verdict(DIRECTIVE.source, DIRECTIVE.flags)).toBe("safe");
  }, 60_000);

  it("keeps the meaning of the rewritten patterns: the same strings match as before", () => {
    const rewritten: Array<[before: string, after: string]> = [
      ["^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$", "^\\s*[^\\s\\u0000][^\\u0000]*$"],
      ["^[^\\r\\n]*\\S[^\\r\\n]*$", "^[^\\S\\r\\n]*\\S[^\\r\\n]*$"],
    ];
    const patterns = bundlePatterns();
    // Every short string over characters that sit on each class boundary.
    const alphabet = ["a", " ", "\t", "\n", "\r", "\u0000", "\u00a0", "\u2028", "😀"];
    const strings = [""];
    for (let length = 1, layer = [""]; length <= 4; length++) {
      layer = layer.flatMap((s) => alphabet.map((c) => s + c));
      strings.push(...layer);
    }
    for (const [before, after] of rewritten) {
      expect(patterns.has(after), after).toBe(true);
      expect(patterns.has(before), before).toBe(false);
      const old = new RegExp(before, AJV_FLAGS);
      const now = new RegExp(after, AJV_FLAGS);
      const differing = strings.filter((s) => old.test(s) !== now.test(s));
      expect(differing, after).toEqual([]);
    }
  });

  // Both run as processes of their own: were validation quadratic again, they would stall for
  // minutes while this test still fails on its timeout, and the children are killed afterwards.
  it("answers a 1 MiB worst-case session.exec on /tau, and on the host itself, while /healthz keeps answering", async () => {
    const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "pattern-safety-state-")));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const hostUrl = await listeningChild(["host", "--port", "0", "--state-dir", stateDir], /^tau host listening on (ws:\/\/\S+)$/m);
    const baseUrl = await listeningChild(["serve", "--port", "0", "--upstream", hostUrl], /^tau-gateway listening on (http:\/\/\S+)$/m);
    const worstCase = "a".repeat(2 ** 20) + "\u0000";
    const exec = (extra: Record<string, string>) => ({ sessionId: "s", execId: "e", command: "true", ...extra });

    for (const url of [`${baseUrl.replace("http://", "ws://")}/tau`, hostUrl]) {
      const client = await TauTestClient.connect(url);
      cleanups.push(() => client.close());
      const badCommand = client.send("session.exec", exec({ command: worstCase }));
      const badCwd = client.send("session.exec", exec({ cwd: worstCase }));
      // Asked while the frames are being read and validated.
      const health = await fetch(`${baseUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });
      for (const [pending, field] of [[badCommand, "command"], [badCwd, "cwd"]] as const) {
        const error = errorOf(await pending.response, `session.exec with a NUL in ${field}`);
        expect(error.code, url).toBe("invalid_params");
        expect(error.message, url).toContain(`params.${field}`);
        // Tau's own words for it.
        expect(error.message, url).toContain("without null bytes");
      }
      // The connection is still in service.
      expect((await client.call("session.list", {})).sessions).toEqual([]);
    }
  }, 60_000);
});
