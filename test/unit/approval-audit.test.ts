import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog } from "../../src/bridge/interactions/policy/audit-log.js";
import { SessionReceipts, type Receipt } from "../../src/bridge/interactions/policy/receipts.js";

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "audit-unit-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { n: number });

describe("the audit log", () => {
  it("rotates into numbered files at its bound and keeps only so many", async () => {
    const dir = freshDir();
    const audit = new AuditLog({ dir, maxFileBytes: 100, maxFiles: 2 });
    // Each line is 29 or 30 bytes: three fit in a file of 100.
    for (let n = 0; n < 20; n++) audit.write({ n, pad: "x".repeat(12) });
    await audit.flushed();
    expect(readdirSync(dir).sort()).toEqual(["audit.1.jsonl", "audit.2.jsonl", "audit.jsonl"]);
    expect(lines(join(dir, "audit.jsonl")).map((l) => l.n)).toEqual([18, 19]);
    expect(lines(join(dir, "audit.1.jsonl")).map((l) => l.n)).toEqual([15, 16, 17]);
    expect(lines(join(dir, "audit.2.jsonl")).map((l) => l.n)).toEqual([12, 13, 14]);
    expect(audit.dropped).toBe(0);
  });

  it("drops what passes its queue bound, and logs a failed write once without throwing", async () => {
    const parent = freshDir();
    const notADir = join(parent, "file");
    writeFileSync(notADir, "");
    const logged: string[] = [];
    const audit = new AuditLog({ dir: join(notADir, "audit"), maxQueuedBytes: 1_000, log: (_level, message) => void logged.push(message) });
    audit.write({ n: 1 });
    await audit.flushed();
    audit.write({ n: 2 });
    await audit.flushed();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/writing the approval audit failed/);
    expect(audit.dropped).toBe(2);
    audit.write({ big: "x".repeat(2_000) });
    expect(audit.dropped).toBe(3);
  });
});

describe("receipts", () => {
  it("keep a call's lifecycle in one record, handed to the sink when its result returns", () => {
    const sunk: Receipt[] = [];
    let tick = 0;
    const receipts = new SessionReceipts((r) => void sunk.push(r), () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)), 2);
    const base = { sessionId: "s", tool: "t", digest: "sha256:00", policyVersion: "1" };
    receipts.propose({ ...base, callId: "c1", rule: { name: "r", index: 0 } });
    receipts.asked("c1", "act_1", "the session's clients");
    receipts.vote("c1", "ann", true);
    receipts.decided("c1", "client", "approved", "once");
    receipts.executed("c1", "sha256:00");
    expect(sunk).toEqual([]);
    expect(receipts.list()).toHaveLength(1);
    receipts.returned("c1", true);
    receipts.returned("c1", false, "twice");
    expect(sunk).toHaveLength(1);
    expect(sunk[0]!.steps.map((s) => s.step)).toEqual(["proposed", "asked", "vote", "decided", "executed", "returned"]);
    expect(sunk[0]!.steps[0]!.at).toBe("2026-01-01T00:00:00.000Z");
    expect(sunk[0]!.interactionId).toBe("act_1");
    for (const callId of ["c2", "c3"]) {
      receipts.propose({ ...base, callId });
      receipts.returned(callId, false, "denied");
    }
    receipts.propose({ ...base, callId: "c4" });
    expect(receipts.list().map((r) => r.callId)).toEqual(["c2", "c3", "c4"]);
    receipts.decided("nobody", "rule", "rejected");
  });
});
