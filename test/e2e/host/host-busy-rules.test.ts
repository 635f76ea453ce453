import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { HostHarness, pause } from "../../support/tau-client.js";

/**
 * Spec §3 busy rules that need a window: while a serialized mutation waits for the active turn to
 * settle, turn requests are refused with `busy`. A bash step that ignores SIGTERM keeps the
 * interrupted turn settling until its kill grace runs out, which holds that window open.
 */

let h: HostHarness;

afterEach(async () => {
  await h.dispose();
});

async function startStubbornTurn() {
  h = new HostHarness();
  await h.start();
  const { client, sessionId } = await h.connectWithSession();
  const marker = join(h.tempDir(), "started");
  const turn = client.send("session.submit", { sessionId, text: `/bash trap '' TERM; touch ${marker}; sleep 20` });
  for (let i = 0; i < 600 && !existsSync(marker); i++) await pause(25);
  expect(existsSync(marker)).toBe(true);
  return { client, sessionId, turn };
}

it("refuses queue and steer with busy while a mutation is queued", async () => {
  const { client, sessionId, turn } = await startStubbornTurn();
  const persona = client.send("session.setPersona", { sessionId, personaId: "reviewer" });
  const queued = await client.fail("session.queue", { sessionId, text: "after the mutation" });
  expect(queued).toMatchObject({ code: "busy", message: expect.stringContaining("mutating session request") });
  const steered = await client.fail("session.steer", { sessionId, text: "steer now" });
  expect(steered.code).toBe("busy");
  await persona.response;
  await turn.response;
});
