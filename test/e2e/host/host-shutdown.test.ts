import { existsSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { HostHarness, pause } from "../../support/tau-client.js";

/** Spec §1.3: a connection that arrives after the server began shutting down is closed 1012. */

let h: HostHarness;

afterEach(async () => {
  await h.dispose();
});

async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await pause(25);
  expect(existsSync(path), `${path} was never created`).toBe(true);
}

it("closes connections arriving during shutdown with 1012 'server closed'", async () => {
  h = new HostHarness();
  const host = await h.start();
  const { client, sessionId } = await h.connectWithSession();
  // The command ignores SIGTERM (and so do its children), so shutdown stays busy until its kill
  // grace runs out; that is the window in which the late connection arrives.
  const marker = join(h.tempDir(), "started");
  client.send("session.submit", { sessionId, text: `/bash trap '' TERM; touch ${marker}; sleep 20` });
  await waitForFile(marker);
  const closing = h.closeHost();
  const late = new WebSocket(host.url);
  const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
    late.once("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    late.once("error", reject);
  });
  expect(closed).toEqual({ code: 1012, reason: "server closed" });
  await closing;
});
