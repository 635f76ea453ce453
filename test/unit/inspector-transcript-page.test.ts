import { describe, expect, it } from "vitest";
import { directionWord } from "../../inspector/render.js";
import { transcriptSummary, transcriptUrl } from "../../inspector/transcript.js";

/** The inspector page's handling of a dropped transcript that needs no DOM. */

describe("a transcript checked from the page", () => {
  it("goes to the check route, with a dialect only when one of the four is picked", () => {
    expect(transcriptUrl("")).toBe("/inspector/api/transcript");
    expect(transcriptUrl("acp")).toBe("/inspector/api/transcript?dialect=acp");
    expect(transcriptUrl("acp&x=1")).toBe("/inspector/api/transcript");
  });

  it("sums up validate's counts and the inspector's gaps", () => {
    expect(transcriptSummary("run.jsonl", { dialect: "codex", lines: 12, valid: 9, invalid: 2, sequenceGaps: 1 })).toBe("run.jsonl (codex): 12 lines, 9 valid, 2 invalid, 1 sequence gap");
    expect(transcriptSummary("one.jsonl", { lines: 1, valid: 1, invalid: 0, sequenceGaps: 0 })).toBe("one.jsonl: 1 line, 1 valid, 0 invalid");
  });

  it("shows a bare line's unknown direction as such", () => {
    expect([directionWord("client"), directionWord("server"), directionWord(undefined)]).toEqual(["in", "out", "?"]);
  });
});
