import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TranscriptChecker } from "../../src/validation/transcript.js";

/** Every example taken from the source documents, as transcripts in fixture files. */
async function check(fixture: string, tauVersion: number) {
  const checker = new TranscriptChecker({ tauVersion });
  const verdicts = [];
  const input = createReadStream(fileURLToPath(new URL(`../fixtures/${fixture}`, import.meta.url)));
  for await (const line of createInterface({ input, crlfDelay: Infinity })) if (line.trim()) verdicts.push(checker.line(line));
  return verdicts;
}

describe("examples from the source documents", () => {
  it("validates every seed 001 example for protocol 18", async () => {
    const verdicts = await check("seed-001/examples-v18.jsonl", 18);
    expect(verdicts.length).toBeGreaterThan(10);
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
  });

  it("rejects the same examples at their old version 17 with a /version error each", async () => {
    const verdicts = await check("seed-001/examples-v17.jsonl", 18);
    for (const v of verdicts) {
      expect(v.ok).toBe(false);
      expect(v.issues[0]).toMatchObject({ pointer: "/version" });
    }
  });

  it("validates every method example derived from seed 000 for protocol 13", async () => {
    const verdicts = await check("seed-000/examples-v13.jsonl", 13);
    expect(verdicts.length).toBeGreaterThanOrEqual(64);
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
  });
});
