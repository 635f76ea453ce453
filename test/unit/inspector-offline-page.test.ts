import { describe, expect, it } from "vitest";
import { directionWord } from "../../inspector/render.js";
import { transcriptSummary, transcriptUrl } from "../../inspector/transcript.js";
import { viewerText } from "../../inspector/viewer.js";

/** The inspector page's logic that needs no DOM for a dropped transcript and for whose view it is. */

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

describe("the viewer the page names", () => {
  it("tells an operator from a tenant's read-only view", () => {
    expect(viewerText({ operator: true })).toBe("every tenant (loopback, no tokens)");
    expect(viewerText({ operator: true, tenant: "ops" })).toBe("operator (ops): every tenant");
    expect(viewerText({ operator: false, tenant: "a" })).toBe("tenant a: its own connections, read-only");
  });
});
