import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { lineBatches } from "../../src/cli/line-batches.js";

/**
 * `validate` reads its input with lineBatches instead of readline: the lines must be readline's
 * (`crlfDelay: Infinity`), wherever the chunks of the input happen to end.
 */

const TEXTS = ["a\nb\n", "a\r\nb", "a\rb\r", "\r", "\n", "", "a\r", "\r\n\r\n", "x\r\r\ny\n\n", "é€😀\r\nz", "a\n\rb", "  \n\t\r\n{}"];

async function readlineLines(chunks: Buffer[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: Readable.from(chunks), crlfDelay: Infinity })) lines.push(line);
  return lines;
}

async function batchedLines(chunks: Array<Buffer | string>): Promise<string[]> {
  const lines: string[] = [];
  for await (const batch of lineBatches(Readable.from(chunks))) lines.push(...batch);
  return lines;
}

/** The text cut into three chunks at every pair of byte offsets (inside multi-byte characters too). */
function* splits(text: string): Generator<Buffer[]> {
  const bytes = Buffer.from(text);
  for (let a = 0; a <= bytes.length; a++) {
    for (let b = a; b <= bytes.length; b++) yield [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter((c) => c.length).map((c) => Buffer.from(c));
  }
}

describe("lineBatches", () => {
  it("gives readline's lines for LF, CRLF and lone CR breaks, however the input is chunked", async () => {
    let compared = 0;
    for (const text of TEXTS) {
      for (const chunks of splits(text)) {
        expect(await batchedLines(chunks), `${JSON.stringify(text)} in chunks ${JSON.stringify(chunks.map(String))}`).toEqual(await readlineLines(chunks));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  it("reads string chunks as they are", async () => {
    expect(await batchedLines(["a\r", "\nb", "\r", "c\n"])).toEqual(["a", "b", "c"]);
  });

  it("gives a chunk's complete lines as one batch", async () => {
    const batches: string[][] = [];
    for await (const batch of lineBatches(Readable.from([Buffer.from("1\n2\n3"), Buffer.from("4\n")]))) batches.push(batch);
    expect(batches).toEqual([["1", "2"], ["34"]]);
  });
});
