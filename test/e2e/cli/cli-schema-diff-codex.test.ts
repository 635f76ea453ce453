import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCliProcess } from "../../support/cli.js";

/**
 * The real `tau-gateway schema diff` process on two real Codex releases: the official app-server
 * bundles of @openai/codex 0.169.0 and 0.171.0, as each release's own binary generated them. The
 * one change that breaks a 0.169.0 client is `agentMessage.moderation.display` becoming a union on
 * `mode`: it must be said once, with the methods it reaches, and every result matched.
 */

const fixtures = join(repoRoot, "test", "fixtures");
const v169 = join(fixtures, "codex-0.169.0");
const v171 = join(fixtures, "codex-0.171.0");

const THREAD_ITEM_METHODS =
  "requests review/start, thread/fork, thread/items/list, thread/list, thread/metadata/update, thread/read, thread/resume, thread/revert, thread/start, thread/turns/list, thread/unarchive, turn/start; server notifications item/completed, item/started, thread/started, turn/completed, turn/started";

describe("schema diff of the official Codex 0.169.0 and 0.171.0 bundles", () => {
  it("names the moderation.display change once, with its methods, and leaves no result unmatched", async () => {
    const r = await runCliProcess(["schema", "diff", v169, v171]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const out = r.stdout.trimEnd().split("\n");
    const breaking = out.filter((l) => l.startsWith("breaking "));
    expect(breaking).toEqual([
      'breaking AgentMessageDisplay /: now a union on mode ("show", "hide", "block"), was one object: removed action, blockType, checkTrustedContacts, cyberTrustedAccess; new mode, version, annotation (mode "show"), trustedContacts (mode "show"), replacement (mode "hide"), reason (mode "block")',
    ]);
    expect(out[out.indexOf(breaking[0]!) + 1]).toBe(`  reaches 17 methods: ${THREAD_ITEM_METHODS} (e.g. server-notification item/completed /params/item/moderation/display)`);
    expect(out.filter((l) => l.includes("AgentMessageDisplay") || l.includes("moderation"))).toHaveLength(2);
    expect(out.at(-1)).toMatch(/^1 breaking, \d+ additive$/);
    // Results not named after their params are compared too (0.171.0 adds to this one's).
    expect(out).toContain("additive request configRequirements/read /result/requirements/otel/headers_helper: new field");
    // ThreadRealtimeItem.observedAtMs stands beside a oneOf.
    expect(out).toContain("additive ThreadRealtimeItem /observedAtMs: new field");
  });

  it("as a server serving a few methods sees what it must now honour and may emit", async () => {
    const r = await runCliProcess(["schema", "diff", "--as", "server", "--methods", "thread/list,item/completed,mcpServer/elicitation/request", v169, v171]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const out = r.stdout.trimEnd().split("\n");
    expect(out).toContain("must-honour request thread/list /params/includedThreadIds: new optional field");
    expect(out).toContain("may-emit server-request mcpServer/elicitation/request /params/environmentId: new optional field");
    expect(out.filter((l) => l.startsWith("breaking "))).toHaveLength(1);
    expect(out.find((l) => l.startsWith("  reaches "))).toBe("  reaches 2 methods: request thread/list; server notification item/completed (e.g. server-notification item/completed /params/item/moderation/display)");
  });

  it("matches every result of the experimental bundles too", async () => {
    const r = await runCliProcess(["schema", "diff", join(v169, "experimental"), join(v171, "experimental")]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("breaking AgentMessageDisplay /: now a union on mode");
  });
});
