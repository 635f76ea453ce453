import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseApprovalPolicy } from "../../../src/bridge/interactions/index.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { deferred } from "../../support/echo-tool.js";
import { driveTraffic, ECHO_TOOL, sharedSession, startInspectorGateway } from "../../support/inspector-gateway.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * The inspector page in a real browser (Debian's chromium, driven by playwright-core; no browser
 * is ever downloaded): it loads under its Content-Security-Policy, shows an Ask turn and a Codex
 * turn live, marks the invalid frame with its pointer and filters, shows one session used by Ask,
 * Codex and Tau clients as one timeline and answers its approval; checks a dropped transcript;
 * downloads a connection and copies its CI command; shows a tenant only its own traffic; follows an
 * approval's receipt step by step, to its owner only. On
 * failure a screenshot goes to test-artifacts/.
 */

const CHROMIUM = "/usr/bin/chromium";
const present = existsSync(CHROMIUM);
if (!present) console.warn(`inspector browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

const cleanups = cleanupsAfterEach();
let browser: Browser | undefined;
const dir = mkdtempSync(join(tmpdir(), "inspector-browser-"));

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
  rmSync(dir, { recursive: true, force: true });
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

  it("shows one session used by Ask, Codex and Tau clients as one timeline, and answers its approval and its plan", async () => {
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

      // A plan the agent proposes: the Codex client is asked (it takes experimental requests); the operator approves it.
      const planned = await s.ask.request("session/send", { sessionId: s.sessionId, content: '/tool submit_plan {"plan":"- one careful step"}' });
      const plan = page.locator('#approvals .interaction[data-interaction="plan_1"]');
      await page.locator('#approvals .interaction[data-interaction="plan_1"][data-kind="plan"][data-status="pending"]').waitFor();
      await plan.locator(".interaction-head", { hasText: "plan: - one careful step" }).waitFor();
      await plan.locator('.asked li[data-dialect="codex"]', { hasText: "item/tool/requestUserInput" }).waitFor();
      await plan.locator('button[data-action="approve"]').click();
      expect((await waitForTerminal(s.ask, s.sessionId, planned.turnId)).type).toBe("turn.completed");
      const approvedPlan = page.locator('#approvals .interaction[data-interaction="plan_1"][data-status="approved"]');
      await approvedPlan.waitFor();
      await approvedPlan.locator(".answers li", { hasText: "operator loopback (inspector): approved" }).waitFor();
      await approvedPlan.locator('.asked li.withdrawn[data-connection^="codex-"]', { hasText: "serverRequest/resolved" }).waitFor();

      // Sub-agents on the session panel: title, state with its answer, what it did.
      await s.turn("/subagent docs read the docs");
      const agent = page.locator("#subagents .subagent.succeeded", { hasText: "docs" });
      await agent.waitFor();
      await agent.locator("div", { hasText: "Answer: Done: read the docs" }).first().waitFor();
      await agent.locator("li", { hasText: "read: Read read the docs (succeeded)" }).waitFor();
      expect(await agent.textContent()).toContain("4 in / 4 out · $0.000008");
      expect(problems).toEqual([]);
    });
  });

  it("checks a transcript dropped on the page: the invalid frame with its pointer, filters, back to live", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    await onPage("transcript", async (page, problems) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="open"]').waitFor();
      const transcript = [
        JSON.stringify({ recording: { format: 1, dialect: "codex", connection: "ci-run", transport: "websocket /", started: "2026-01-01T00:00:00.000Z" } }),
        JSON.stringify({ direction: "client", time: "2026-01-01T00:00:00.000Z", message: { id: 1, method: "initialize", params: { clientInfo: { name: "ci", version: "1" } } } }),
        JSON.stringify({ direction: "client", time: "2026-01-01T00:00:01.000Z", message: { id: 2, method: "turn/start", params: { threadId: "t1", input: "not a list" } } }),
        "{not json",
      ].join("\n");
      // Dropped anywhere on the page, as a file from the desktop would be.
      const dataTransfer = await page.evaluateHandle((text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], "ci-run.jsonl", { type: "application/x-ndjson" }));
        return transfer;
      }, transcript);
      await page.dispatchEvent("main", "dragover", { dataTransfer });
      await page.dispatchEvent("main", "drop", { dataTransfer });
      await expect.poll(() => page.locator("#transcript-state").textContent()).toBe("ci-run.jsonl (codex): 4 lines, 1 valid, 2 invalid");
      const rows = page.locator("#frames tbody tr.frame");
      await expect.poll(() => rows.count()).toBe(3);
      const invalid = page.locator('#frames tr[data-status="invalid"]');
      expect(await invalid.getAttribute("data-method")).toBe("turn/start");
      expect(await invalid.getAttribute("data-pointer")).toMatch(/^\/params\/input/);
      expect(await invalid.locator("td").first().textContent()).toBe("3");
      expect(await page.locator('#frames tr[data-status="not-json"] td').first().textContent()).toBe("4");
      await page.fill("#filter", "invalid");
      await expect.poll(() => rows.count()).toBe(2);
      await page.fill("#filter", "status:not-json");
      await expect.poll(() => rows.count()).toBe(1);
      await page.fill("#filter", "");

      // A file picked instead, with a dialect forced; then back to the live frames.
      await page.selectOption("#transcript-dialect", "acp");
      await page.setInputFiles("#transcript-file", { name: "acp.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n') });
      await expect.poll(() => page.locator("#transcript-state").textContent()).toBe("acp.jsonl (acp): 1 line, 1 valid, 0 invalid");
      await page.click("#transcript-close");
      await driveTraffic(gw, cleanups);
      await page.locator('#frames tr[data-method="turn/completed"]').first().waitFor();
      expect(await page.locator("#frames-count").textContent()).not.toContain(".jsonl");
      expect(problems).toEqual([]);
    });
  });

  it("downloads a connection's frames as a recording validate reads, and copies the CI command", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    await driveTraffic(gw, cleanups);
    await onPage("download", async (page, problems) => {
      await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: gw.baseUrl });
      await page.goto(`${gw.baseUrl}/inspector`);
      const codex = page.locator("#connections tbody tr[data-dialect=codex]");
      await codex.waitFor();
      const id = await codex.getAttribute("data-connection");
      // The button must be clickable where it is drawn (not under the frames pane).
      const [download] = await Promise.all([page.waitForEvent("download"), codex.locator("button[data-download]").click()]);
      expect(download.suggestedFilename()).toBe(`${id}.jsonl`);
      const path = join(dir, `${id}.jsonl`);
      await download.saveAs(path);
      const result = await runCommand(["validate", "--format", "json", path]);
      // The recording's one bad request, as the page marked it.
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout.trimEnd().split("\n").at(-1)!)).toMatchObject({ invalid: 1 });
      await expect.poll(() => page.locator("#ci-command").textContent()).toBe(`npx tau-gateway validate --format github ${id}.jsonl`);
      await page.click("#copy-ci");
      await expect.poll(() => page.locator("#copy-ci").textContent()).toBe("Copied");
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`npx tau-gateway validate --format github ${id}.jsonl`);
      expect(problems).toEqual([]);
    });
  });

  it("asks for a token when the gateway has tokens; a tenant's shows its own traffic only, an operator's everyone's", async () => {
    const tokens = TokenRegistry.parse(
      JSON.stringify([
        { id: "ops", token: "op-token", tenant: "ops", operator: true },
        { id: "a", token: "tenant-a-token", tenant: "a" },
        { id: "b", token: "tenant-b-token", tenant: "b" },
      ]),
      "tokens.json",
    );
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens }));
    for (const token of ["tenant-a-token", "tenant-b-token"]) {
      const client = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: { authorization: `Bearer ${token}` } });
      cleanups.push(() => client.socket.close());
      await openSession(client);
    }
    await onPage("token", async (page, problems) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="refused"]').waitFor();
      await page.fill("#token", "tenant-a-token");
      await page.click("#token-form button");
      await page.locator('#feed-state[data-state="open"]').waitFor();
      await expect.poll(() => page.locator("#viewer").textContent()).toBe("tenant a: its own connections, read-only");
      expect(await page.locator("body").getAttribute("data-viewer")).toBe("tenant");
      await page.locator("#frames tbody tr.frame").first().waitFor();
      const principals = () => page.locator("#connections tbody tr td:nth-child(3)").allTextContents();
      expect(await principals()).toEqual(["a (a)"]);
      const tenantFrames = await page.locator("#frames tbody tr.frame").count();

      // The operator's token, in a fresh tab: both tenants.
      await page.evaluate(() => sessionStorage.clear());
      await page.reload();
      await page.locator('#feed-state[data-state="refused"]').waitFor();
      await page.fill("#token", "op-token");
      await page.click("#token-form button");
      await page.locator('#feed-state[data-state="open"]').waitFor();
      await expect.poll(() => page.locator("#viewer").textContent()).toBe("operator (ops): every tenant");
      await expect.poll(async () => (await principals()).sort()).toEqual(["a (a)", "b (b)"]);
      await expect.poll(() => page.locator("#frames tbody tr.frame").count()).toBe(2 * tenantFrames);
      expect(problems.filter((p) => !/401|403/.test(p))).toEqual([]);
    });
  });

  it("follows the receipt of an approval a client decides, step by step, and shows it to the session's owner only", async () => {
    const tokens = TokenRegistry.parse(
      JSON.stringify([
        { id: "alice", token: "alice-token", tenant: "team" },
        { id: "carol", token: "carol-token", tenant: "team" },
      ]),
      "tokens.json",
    );
    const policy = parseApprovalPolicy("version: 4\nrules:\n  - name: alice-decides\n    match: { tool: echo-json }\n    action: require\n    approvers: { principals: [alice] }\n", "policy.yaml");
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens, commandTools: [ECHO_TOOL], approvalPolicy: policy }));
    const alice = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: { authorization: "Bearer alice-token" } });
    cleanups.push(() => alice.socket.close());
    const answer = deferred<{ decision: string }>();
    alice.reverse = () => answer.promise;
    const sessionId = await openSession(alice, { capabilities: ["reverseRequests"] });

    const open = async (page: Page, token: string) => {
      await page.goto(`${gw.baseUrl}/inspector`);
      await page.locator('#feed-state[data-state="refused"]').waitFor();
      await page.fill("#token", token);
      await page.click("#token-form button");
      await page.locator('#feed-state[data-state="open"]').waitFor();
      await page.locator(`#session-pick option[value="${sessionId}"]`).waitFor({ state: "attached" });
      await page.selectOption("#session-pick", sessionId);
    };
    await onPage("receipts", async (page, problems) => {
      await open(page, "alice-token");
      await page.locator("#receipts p.empty", { hasText: "No command-tool calls in this session yet." }).waitFor();
      const { turnId } = await alice.request("session/send", { sessionId, content: '/tool echo-json {"a":5}\nDone' });

      // Asked, not yet decided: the receipt is under way on the page.
      const receipt = page.locator('#receipts .receipt[data-interaction="act_1"]');
      await receipt.locator('li[data-step="asked"]', { hasText: "asked the session's clients; decided by principals alice" }).waitFor();
      expect(await receipt.getAttribute("class")).toBe("receipt open");
      expect(await receipt.locator(".receipt-head").textContent()).toMatch(/^echo-json \S+, asked as act_1 — rule "alice-decides" \(\/rules\/0\), policy 4 — sha256:[0-9a-f]{64}$/);
      expect(await receipt.locator("li").evaluateAll((items) => items.map((item) => item.getAttribute("data-step")))).toEqual(["proposed", "asked"]);

      // Alice approves from her client: the vote, the decision, the call as it ran and its result arrive live.
      answer.resolve({ decision: "allow_once" });
      expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
      await receipt.locator('li[data-step="returned"]', { hasText: "returned ok" }).waitFor();
      expect(await receipt.locator("li").evaluateAll((items) => items.map((item) => item.getAttribute("data-step")))).toEqual(["proposed", "asked", "vote", "decided", "executed", "returned"]);
      await receipt.locator('li[data-step="vote"]', { hasText: "vote: alice approves" }).waitFor();
      await receipt.locator('li[data-step="decided"]', { hasText: "decided by a client (alice): approved — once" }).waitFor();
      const digest = (await receipt.locator(".receipt-head").textContent())!.split(" — ").at(-1)!;
      expect(await receipt.locator('li[data-step="executed"]').textContent()).toMatch(new RegExp(`executed ${digest}$`));
      expect(await receipt.getAttribute("class")).toBe("receipt finished approved");
      expect(problems.filter((p) => !/401|403/.test(p))).toEqual([]);
    });

    // Carol, of the same tenant, sees the session but not its receipts.
    await onPage("receipts-refused", async (page, problems) => {
      await open(page, "carol-token");
      await page.locator("#receipts p[data-refused]", { hasText: `principal 'carol' does not own session ${sessionId}` }).waitFor();
      expect(await page.locator("#receipts .receipt").count()).toBe(0);
      expect(problems.filter((p) => !/401|403/.test(p))).toEqual([]);
    });
  });
});
