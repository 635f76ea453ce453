import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { waitForTerminal } from "../support/ask-events.js";
import { TauTestClient } from "../support/tau-client.js";
import { driveTraffic, ECHO_TOOL, sharedSession, startInspectorGateway } from "../support/inspector-gateway.js";

/**
 * The inspector page in a real browser (Debian's chromium, driven by playwright-core; no browser
 * is ever downloaded): it loads under its Content-Security-Policy, shows an Ask turn and a Codex
 * turn live, marks the invalid frame with its pointer and filters, shows one session used by Ask,
 * Codex and Tau clients as one timeline and answers its approval. On failure a screenshot goes to
 * test-artifacts/.
 */

const CHROMIUM = "/usr/bin/chromium";
const present = existsSync(CHROMIUM);
if (!present) console.warn(`inspector browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

const cleanups = cleanupsAfterEach();
let browser: Browser | undefined;

beforeAll(async () => {
  if (!present) return;
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
});

/** Runs `body` on a fresh page; on failure keeps a screenshot in test-artifacts/ and rethrows. */
async function onPage(name: string, body: (page: Page, problems: string[]) => Promise<void>) {
  const context = await browser!.newContext();
  cleanups.push(() => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  try {
    await body(page, problems);
  } catch (error) {
    const dir = join(process.cwd(), "test-artifacts");
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `inspector-${name}.png`), fullPage: true }).catch(() => undefined);
    throw error;
  }
}

describe.skipIf(!present)("the inspector page in Chromium", () => {
  it("shows a live Ask turn and a Codex turn, marks the invalid frame with its pointer, and filters", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    await onPage("live", async (page, problems) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="open"]').waitFor();
      // Traffic after the page opened: it arrives over the live feed, not in the snapshot.
      const traffic = await driveTraffic(gw, cleanups);

      const frames = page.locator("#frames tbody tr.frame");
      await frames.filter({ hasText: "session/send" }).first().waitFor();
      await page.locator('#frames tr[data-method="turn/completed"]').first().waitFor();
      await page.locator("#connections tbody tr[data-dialect=ask]").waitFor();
      await page.locator("#connections tbody tr[data-dialect=codex]").waitFor();
      // The Ask turn's answer text and the Codex agent's deltas are there, deltas collapsed per item.
      await page.locator("#frames tr.frame", { hasText: "session/event" }).first().waitFor();

      const invalid = page.locator('#frames tr[data-status="invalid"]');
      await invalid.waitFor();
      expect(await invalid.count()).toBe(1);
      expect(await invalid.getAttribute("data-method")).toBe("turn/start");
      expect(await invalid.getAttribute("data-pointer")).toMatch(/^\/params\/input/);
      expect(await invalid.locator("td.verdict").textContent()).toMatch(/^invalid — \/params\/input/);

      await page.fill("#filter", "invalid");
      await expect.poll(() => page.locator("#frames tbody tr.frame").count()).toBe(1);
      await page.fill("#filter", `dialect:ask dir:in method:session/*`);
      await expect.poll(() => page.locator("#frames tbody tr.frame").count()).toBeGreaterThan(1);
      for (const method of await page.locator("#frames tbody tr.frame").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-method")))) {
        expect(method).toMatch(/^session\//);
      }
      await page.fill("#filter", `session:${traffic.threadId} method:turn/completed`);
      await expect.poll(() => page.locator("#frames tbody tr.frame").count()).toBe(1);
      await page.fill("#filter", "dialect:mcp");
      await expect.poll(() => page.locator("#filter-errors").textContent()).toContain("dialect is ask, codex, acp or tau");

      // Picking a connection offers the CI command for its download.
      await page.locator("#connections tbody tr[data-dialect=codex] td").first().click();
      await expect.poll(() => page.locator("#ci-command").textContent()).toMatch(/^npx tau-gateway validate --format github codex-\d+\.jsonl$/);
      expect(problems).toEqual([]);
    });
  });

  it("shows one session used by Ask, Codex and Tau clients as one timeline, and answers its approval", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ commandTools: [ECHO_TOOL] }));
    await onPage("session", async (page, problems) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="open"]').waitFor();
      const s = await sharedSession(gw, cleanups);
      // A Tau client observes it too, on its own upstream connection.
      const tau = await TauTestClient.connect(gw.wsUrl("/tau"));
      cleanups.push(() => tau.close());
      await tau.initialize();
      await tau.request("session.observe", { sessionId: s.sessionId });
      await s.turn("hello from both");
      await s.codex.waitFor((m) => m.method === "turn/completed");

      await page.locator(`#session-pick option[value="${s.sessionId}"]`).waitFor({ state: "attached" });
      await page.selectOption("#session-pick", s.sessionId);
      // turn.started, under it the frames it became: Ask's session/event, Codex's turn/started, the Tau delta.
      const started = page.locator('#timeline li.event[data-type="turn.started"]');
      await started.locator('li.caused-frame[data-dialect="ask"][data-method="session/event"]').waitFor();
      await started.locator('li.caused-frame[data-dialect="codex"][data-method="turn/started"]').waitFor();
      await started.locator('li.caused-frame[data-dialect="tau"][data-method="session.delta"]').waitFor();
      const completed = page.locator('#timeline li.event[data-type="turn.completed"]');
      await completed.locator('li.caused-frame[data-dialect="ask"]').waitFor();
      await completed.locator('li.caused-frame[data-dialect="codex"][data-method="turn/completed"]').waitFor();
      expect(await page.locator("#timeline li.event").first().getAttribute("data-type")).toBe("session.created");

      // An approval both clients are asked about; neither answers.
      const { turnId } = await s.callTool(7);
      const approval = page.locator('#approvals .interaction[data-interaction="act_1"]');
      await page.locator('#approvals .interaction[data-interaction="act_1"][data-status="pending"]').waitFor();
      await approval.locator('.asked li[data-dialect="ask"]', { hasText: "interaction/requestPermission" }).waitFor();
      await approval.locator('.asked li[data-dialect="codex"]', { hasText: "item/commandExecution/requestApproval" }).waitFor();
      await approval.locator('button[data-action="approve"]').click();

      // The command runs for the Ask client's turn; the Codex client's prompt is withdrawn.
      expect((await waitForTerminal(s.ask, s.sessionId, turnId)).type).toBe("turn.completed");
      const output = s.ask.eventsOf(s.sessionId).find((e) => e.type === "tool.result")?.payload as { output?: string } | undefined;
      expect(output?.output).toContain('{"a":7}');
      const [request] = s.codex.serverRequests("item/commandExecution/requestApproval");
      await s.codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === request!.id);

      // The page says who answered what, and how it ended.
      const settled = page.locator('#approvals .interaction[data-interaction="act_1"][data-status="approved"]');
      await settled.waitFor();
      await settled.locator(".answers li", { hasText: "operator loopback (inspector): approved once" }).waitFor();
      await settled.locator('.asked li.withdrawn[data-connection^="codex-"]', { hasText: "serverRequest/resolved" }).waitFor();
      expect(await settled.locator("button").count()).toBe(0);
      await page.locator('#timeline li.event[data-type="approval.updated"] li.caused-frame[data-dialect="ask"]').waitFor();
      expect(problems).toEqual([]);
    });
  });

  it("asks for an operator's token when the gateway has tokens, and refuses a tenant's", async () => {
    const tokens = TokenRegistry.parse(JSON.stringify([{ id: "ops", token: "op-token", tenant: "ops", operator: true }, { id: "a", token: "tenant-token", tenant: "a" }]), "tokens.json");
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens }));
    await onPage("token", async (page) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="refused"]').waitFor();
      await page.fill("#token", "tenant-token");
      await page.click("#token-form button");
      await expect.poll(() => page.locator("#feed-state").textContent()).toContain("operator");
      await page.fill("#token", "op-token");
      await page.click("#token-form button");
      await page.locator('#feed-state[data-state="open"]').waitFor();
    });
  });
});
