import { describe, expect, it } from "vitest";
import { RecallMismatchError, RequestRecall } from "../../src/bridge/request-recall.js";

const KEY = "6f1c2a0e-9d43-4b1e-8a55-0c2e7d9b1f00";

describe("RequestRecall", () => {
  it("runs a keyed request once: the repeat gets the first outcome, also while it is still running", async () => {
    const recall = new RequestRecall();
    let runs = 0;
    let finish!: (value: string) => void;
    const run = () => {
      runs++;
      return new Promise<string>((resolve) => (finish = resolve));
    };
    const first = recall.once({ method: "turn/start" }, KEY, { text: "hi" }, run);
    const repeat = recall.once({ method: "turn/start" }, KEY, { text: "hi" }, run);
    finish("turn-1");
    expect(await Promise.all([first, repeat])).toEqual(["turn-1", "turn-1"]);
    expect(await recall.once({ method: "turn/start" }, KEY, { text: "hi" }, run)).toBe("turn-1");
    expect(runs).toBe(1);
  });

  it("gives a failed first run's error to the repeat too", async () => {
    const recall = new RequestRecall();
    const failing = () => Promise.reject(new Error("busy"));
    await expect(recall.once({ method: "session/send" }, KEY, {}, failing)).rejects.toThrow("busy");
    await expect(recall.once({ method: "session/send" }, KEY, {}, () => Promise.resolve("ran again"))).rejects.toThrow("busy");
  });

  it("refuses the same key with other params, and keeps tenants and methods apart", async () => {
    const recall = new RequestRecall();
    await recall.once({ tenant: "a", method: "turn/start" }, KEY, { text: "hi" }, async () => "a's");
    await expect(recall.once({ tenant: "a", method: "turn/start" }, KEY, { text: "other" }, async () => "x")).rejects.toBeInstanceOf(RecallMismatchError);
    expect(await recall.once({ tenant: "b", method: "turn/start" }, KEY, { text: "hi" }, async () => "b's")).toBe("b's");
    expect(await recall.once({ tenant: "a", method: "session/send" }, KEY, { text: "hi" }, async () => "send")).toBe("send");
  });

  it("forgets a key after keepMs, and the oldest keys past its bound", async () => {
    let now = 0;
    const recall = new RequestRecall(1_000, 2, () => now);
    await recall.once({ method: "m" }, KEY, {}, async () => "first");
    now = 1_000;
    expect(await recall.once({ method: "m" }, KEY, {}, async () => "again")).toBe("again");
    await recall.once({ method: "m" }, "k2", {}, async () => "2");
    await recall.once({ method: "m" }, "k3", {}, async () => "3");
    expect(recall.size).toBe(2);
    expect(await recall.once({ method: "m" }, KEY, {}, async () => "forgotten")).toBe("forgotten");
  });
});
