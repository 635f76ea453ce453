import { describe, expect, it } from "vitest";
import { runCliProcess } from "../../support/cli.js";

/**
 * JSON allows U+2028 and U+2029 raw inside strings, but line readers split on them (Node 24's
 * readline does): the gateway writes them as escapes, so every NDJSON line is one whole message.
 */
describe("a message carrying U+2028 and U+2029 on stdio", () => {
  it("is written on one line, the characters escaped, the text they stand in unchanged", async () => {
    const method = "no\u2028such\u2029method";
    const input = [
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { client: { name: "t", version: "1" } } },
      { jsonrpc: "2.0", id: 1, method, params: {} },
    ];
    const { code, stdout } = await runCliProcess(["stdio"], { stdin: input.map((m) => `${JSON.stringify(m)}\n`).join("") });
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/[\u2028\u2029]/);
    expect(stdout).toContain("\\u2028");
    const lines = stdout.split(/\r\n|[\n\r\u2028\u2029]/).filter(Boolean);
    expect(lines).toHaveLength(2);
    const answer = JSON.parse(lines[1]!) as { id: number; error: { code: number; message: string } };
    expect(answer).toMatchObject({ id: 1, error: { code: -32601 } });
    expect(answer.error.message).toContain(method);
  });
});
