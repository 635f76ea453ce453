import { describe, expect, it } from "vitest";
import type { SessionSource, Thread } from "../../generated/codex-v2.js";
import { threadListPage, type ListedThread } from "../../src/codex/thread-list.js";
import { parentThreadOf, sourceKindOf, sourceMatches } from "../../src/codex/thread-sources.js";

/**
 * thread/list's classification of sources and its sub-agent filters, on threads of every source
 * Codex has (the gateway's own threads are all vscode, so the e2e suite cannot make the others):
 * a sub-agent thread is listed under its kind and under its parent and ancestors, never by default.
 */

const spawned = (parent: string, depth = 1): SessionSource => ({ subAgent: { thread_spawn: { parent_thread_id: parent, depth, agent_nickname: null, agent_role: null } } });

function listed(id: string, source: SessionSource, createdAtMs: number): ListedThread {
  const thread = { id, sessionId: id, preview: id, ephemeral: false, modelProvider: "tau", createdAt: 0, updatedAt: 0, status: { type: "notLoaded" }, cwd: "/w", cliVersion: "0", source, turns: [], projectId: null } as Thread;
  return { thread, createdAtMs, updatedAtMs: createdAtMs };
}

describe("thread sources", () => {
  it("classifies every source as Codex's ThreadSourceKind", () => {
    expect(["cli", "vscode", "exec", "appServer", "unknown"].map((s) => sourceKindOf(s as SessionSource))).toEqual(["cli", "vscode", "exec", "appServer", "unknown"]);
    expect(sourceKindOf({ custom: "atlas" })).toBe("unknown");
    expect(sourceKindOf({ subAgent: "review" })).toBe("subAgentReview");
    expect(sourceKindOf({ subAgent: "compact" })).toBe("subAgentCompact");
    expect(sourceKindOf({ subAgent: "memory_consolidation" })).toBe("subAgentOther");
    expect(sourceKindOf({ subAgent: { other: "x" } })).toBe("subAgentOther");
    expect(sourceKindOf(spawned("p"))).toBe("subAgentThreadSpawn");
    expect(parentThreadOf(spawned("p"))).toBe("p");
    expect(parentThreadOf("appServer")).toBeUndefined();
    expect(parentThreadOf({ subAgent: "review" })).toBeUndefined();
  });

  it("matches sub-agents only when asked for (subAgent names them all), and by default only Codex's interactive sources", () => {
    expect(sourceMatches(spawned("p"), undefined)).toBe(false);
    expect(sourceMatches(spawned("p"), [])).toBe(false);
    expect(sourceMatches(spawned("p"), ["subAgentThreadSpawn"])).toBe(true);
    expect(sourceMatches(spawned("p"), ["subAgent"])).toBe(true);
    expect(sourceMatches({ subAgent: "review" }, ["subAgentThreadSpawn"])).toBe(false);
    expect(sourceMatches("vscode", null)).toBe(true);
    expect(sourceMatches("cli", [])).toBe(true);
    for (const source of ["exec", "appServer", "unknown"] as const) expect(sourceMatches(source, undefined), source).toBe(false);
    expect(sourceMatches("appServer", ["exec", "appServer"])).toBe(true);
    expect(sourceMatches("vscode", ["appServer"])).toBe(false);
  });
});

describe("thread/list over sub-agent threads", () => {
  const threads = [listed("root", "vscode", 1), listed("child", spawned("root"), 2), listed("grandchild", spawned("child", 2), 3), listed("other", "vscode", 4)];
  const ids = (params: Parameters<typeof threadListPage>[1]) => threadListPage(threads, params).data.map((t) => t.id);

  it("lists the parent's spawned threads with parentThreadId, every descendant with ancestorThreadId", () => {
    expect(ids({ sourceKinds: ["subAgentThreadSpawn"], parentThreadId: "root" })).toEqual(["child"]);
    expect(ids({ sourceKinds: ["subAgentThreadSpawn"], ancestorThreadId: "root" })).toEqual(["grandchild", "child"]);
    expect(ids({ sourceKinds: ["subAgentThreadSpawn"], ancestorThreadId: "child" })).toEqual(["grandchild"]);
    expect(ids({ sourceKinds: ["subAgentThreadSpawn"], ancestorThreadId: "other" })).toEqual([]);
  });

  it("leaves sub-agent threads out of a default list", () => {
    expect(ids({})).toEqual(["other", "root"]);
    expect(ids({ sortDirection: "asc" })).toEqual(["root", "other"]);
  });
});
