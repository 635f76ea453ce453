import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess } from "../../support/cli.js";

/**
 * `tau-gateway validate --jobs N` (the bundle users run, with its worker threads): files checked
 * at once by the command's thread and workers give the report one thread gives, byte for byte and in the same order, in
 * every format, also when a file cannot be read.
 */

let dir: string;
const file = async (name: string, lines: unknown[]) => {
  const path = join(dir, name);
  await writeFile(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
};

const request = (id: string) => ({ version: 18, type: "request", id, method: "session.list", params: {} });
const response = (id: string) => ({ version: 18, type: "response", id, ok: true, result: { sessions: [{ sessionId: "s1", lifecycle: "idle" }] } });
const wrongResult = (id: string) => ({ version: 18, type: "response", id, ok: true, result: { sessionId: "s1" } });

let files: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tau-gateway-validate-jobs-"));
  // Files of very different lengths, so workers finish out of order; each with a response whose
  // verdict depends on the request before it in the same file, valid and invalid lines, an Ask line.
  files = [];
  for (const [i, length] of [3000, 5, 1200, 1, 40, 2500].entries()) {
    const lines: unknown[] = [];
    for (let n = 0; n < length; n++) {
      const id = `f${i}-r${n}`;
      lines.push(request(id), n % 97 === 3 ? wrongResult(id) : response(id));
      if (n % 301 === 7) lines.push("{not json", { id: n, method: "session/send", params: { sessionId: "s", content: 42 } }, "");
    }
    files.push(await file(`t${i}.jsonl`, lines));
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("tau-gateway validate --jobs", () => {
  for (const format of ["text", "json", "github", "junit", "sarif"]) {
    it(`reports as one thread does, in the files' order (--format ${format})`, async () => {
      const one = await runCliProcess(["validate", "--format", format, ...files]);
      const four = await runCliProcess(["validate", "--jobs", "4", "--format", format, ...files]);
      expect(one.code, one.stderr).toBe(1);
      expect(four).toEqual(one);
    });
  }

  it("stops at a file it cannot read, after reporting the ones before it, as one thread does", async () => {
    const withMissing = [files[0]!, files[1]!, join(dir, "missing.jsonl"), files[2]!];
    const one = await runCliProcess(["validate", ...withMissing]);
    const three = await runCliProcess(["validate", "--jobs", "3", ...withMissing]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain("cannot read");
    expect(three).toEqual(one);
  });

  it("reports as one thread does with two jobs, the command's thread checking files beside one worker", async () => {
    const one = await runCliProcess(["validate", "--format", "junit", ...files]);
    const two = await runCliProcess(["validate", "--jobs", "2", "--format", "junit", ...files]);
    expect(one.code, one.stderr).toBe(1);
    expect(two).toEqual(one);
  });

  it("stops at a first file it cannot read, which the command's thread took, as one thread does", async () => {
    const missingFirst = [join(dir, "missing.jsonl"), files[0]!, files[2]!];
    const one = await runCliProcess(["validate", ...missingFirst]);
    const two = await runCliProcess(["validate", "--jobs", "2", ...missingFirst]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain("cannot read");
    expect(two).toEqual(one);
  });

  it("refuses a --jobs that is not a whole number from 1 to 999", async () => {
    for (const jobs of ["0", "1.5", "many", "1000"]) {
      const r = await runCliProcess(["validate", "--jobs", jobs, files[0]!]);
      expect(r.code, jobs).toBe(2);
      expect(r.stderr).toContain(`--jobs must be a whole number from 1 to 999 (got ${JSON.stringify(jobs)})`);
    }
  });
});
