import { describe, expect, it } from "vitest";
import { SendsInFlight } from "../../src/bridge/sends-in-flight.js";

/** What session/close waits for: the sends registered before it looked, until they settle or time runs out. */
describe("SendsInFlight", () => {
  it("settles at once with nothing in flight, and once every registered send has settled, failures included", async () => {
    const sends = new SendsInFlight();
    expect(await sends.settled(1000)).toBe(true);
    let accept!: (value: string) => void;
    let refuse!: (error: Error) => void;
    const accepted = sends.track(new Promise<string>((resolve) => (accept = resolve)));
    const refused = sends.track(new Promise<string>((_resolve, reject) => (refuse = reject)));
    refused.catch(() => undefined);
    expect(sends.size).toBe(2);
    let done = false;
    const waiting = sends.settled(10_000).then((all) => ((done = true), all));
    accept("ok");
    await accepted;
    expect(done).toBe(false);
    refuse(new Error("no"));
    expect(await waiting).toBe(true);
    expect(sends.size).toBe(0);
  });

  it("gives up after the timeout with false; sends registered later are not waited for", async () => {
    const sends = new SendsInFlight();
    sends.track(new Promise(() => undefined));
    const started = Date.now();
    expect(await sends.settled(50)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);

    const later = new SendsInFlight();
    let accept!: () => void;
    later.track(new Promise<void>((resolve) => (accept = resolve)));
    const waiting = later.settled(10_000);
    later.track(new Promise(() => undefined));
    accept();
    expect(await waiting).toBe(true);
  });
});
