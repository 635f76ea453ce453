import { describe, expect, it } from "vitest";
import { planEntries } from "../../../src/acp/plan-entries.js";
import { promptText } from "../../../src/acp/prompt-text.js";
import { presentTool } from "../../../src/acp/tool-presentation.js";

/** The pure pieces of the ACP translation: prompts to Tau text, plans to entries, tools to cards. */

describe("an ACP prompt as Tau's text", () => {
  it("keeps text, links resources and inlines embedded text resources", () => {
    expect(
      promptText([
        { type: "text", text: "Explain " },
        { type: "resource_link", uri: "file:///p/a.ts", name: "a.ts" },
        { type: "text", text: " using:" },
        { type: "resource", resource: { uri: "file:///p/b.md", text: "# Notes\nline" } },
      ]),
    ).toBe('Explain [a.ts](file:///p/a.ts) using:\n<context ref="file:///p/b.md">\n# Notes\nline\n</context>\n');
  });

  it("refuses what Tau cannot take, naming the block, rather than dropping it", () => {
    expect(() => promptText([{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }])).toThrow(/prompt\.1\.type: image content is not supported/);
    expect(() => promptText([{ type: "resource", resource: { uri: "file:///x.bin", blob: "aGk=" } }])).toThrow(/prompt\.0\.resource: binary resources/);
    expect(() => promptText([{ type: "text", text: "  " }])).toThrow(/prompt: no text to send/);
  });
});

describe("a submitted plan as ACP plan entries", () => {
  it("makes one pending entry per step, list markers and checkboxes dropped", () => {
    expect(planEntries("1. Read the code\n\n- [x] Write a test\n* Fix it\nShip")).toEqual(
      ["Read the code", "Write a test", "Fix it", "Ship"].map((content) => ({ content, priority: "medium", status: "pending" })),
    );
  });
});

describe("a Tau tool call as an ACP tool card", () => {
  const commandTools = new Set(["deploy"]);
  it("picks the closest kind, a readable title and the file it touches", () => {
    expect(presentTool("bash", { command: "npm test\nnpm run lint" }, "/p", commandTools)).toEqual({ kind: "execute", title: "npm test" });
    expect(presentTool("edit", { path: "src/a.ts" }, "/p", commandTools)).toEqual({ kind: "edit", title: "Edit src/a.ts", locations: [{ path: "/p/src/a.ts" }] });
    expect(presentTool("web", { url: "https://example.com" }, "/p", commandTools)).toEqual({ kind: "fetch", title: "https://example.com" });
    expect(presentTool("deploy", {}, "/p", commandTools)).toEqual({ kind: "execute", title: "Run deploy" });
    expect(presentTool("spawn_agent", {}, "/p", commandTools)).toEqual({ kind: "other", title: "spawn_agent" });
  });
});
