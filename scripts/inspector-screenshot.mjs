// `npm run docs:screenshot`: the picture of the inspector in the README (docs/images/inspector.png).
// Starts `tau-gateway serve --inspector` on a free loopback port (embedded host, no tokens), opens
// the page in Debian's chromium through playwright-core (never downloading a browser), drives an
// Ask turn, a Codex turn and one Codex request that breaks the schema, and takes the picture once
// the live feed has shown them. CHROMIUM=/path overrides the browser.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import WebSocket from "ws";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const output = join(root, "docs", "images", "inspector.png");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const workdir = mkdtempSync(join(tmpdir(), "inspector-screenshot-"));

/** The gateway, once it printed where it listens. */
function serve() {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--inspector", "--host", "127.0.0.1", "--port", "0", "--default-cwd", workdir], {
    cwd: root,
    env: { ...process.env, TAU_GATEWAY_LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const match = /tau-gateway listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve({ child, baseUrl: match[1] });
    });
    child.once("exit", (code) => reject(new Error(`tau-gateway serve exited with ${code}:\n${stderr}`)));
  });
}

/** A JSON-RPC client over a WebSocket: requests resolve with their answer; `until` awaits a message. */
async function client(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const received = [];
  const waiters = new Set();
  socket.on("message", (data) => {
    received.push(JSON.parse(String(data)));
    for (const waiter of [...waiters]) waiter();
  });
  let nextId = 0;
  const until = (predicate) =>
    new Promise((resolve) => {
      const check = () => {
        const found = received.find(predicate);
        if (!found) return;
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  const request = async (method, params) => {
    const id = ++nextId;
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const answer = await until((m) => m.id === id && !("method" in m));
    return answer.result ?? answer.error;
  };
  return { socket, request, until, notify: (method, params) => socket.send(JSON.stringify({ jsonrpc: "2.0", method, params })) };
}

async function traffic(baseUrl) {
  const ws = baseUrl.replace("http://", "ws://");
  const ask = await client(`${ws}/rpc`);
  await ask.request("initialize", { client: { name: "ask-cli", version: "0.4.21" } });
  const { session } = await ask.request("session/create", {});
  await ask.request("session/subscribe", { sessionId: session.sessionId });
  await ask.request("session/send", { sessionId: session.sessionId, content: "Summarise the README" });
  await ask.until((m) => m.method === "session/event" && m.params.event.type === "turn.completed");

  const codex = await client(`${ws}/`);
  await codex.request("initialize", { clientInfo: { name: "codex-tui", version: "0.50.0" } });
  codex.notify("initialized", {});
  const { thread } = await codex.request("thread/start", { cwd: workdir });
  const { turn } = await codex.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "List the open issues", text_elements: [] }] });
  await codex.until((m) => m.method === "turn/completed" && m.params.turn.id === turn.id);
  await codex.request("turn/start", { threadId: thread.id, input: "not a list" });
  return [ask.socket, codex.socket];
}

const { child, baseUrl } = await serve();
const browser = await chromium.launch({ executablePath: browserPath, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${baseUrl}/inspector`);
  await page.locator('#feed-state[data-state="open"]').waitFor();
  const sockets = await traffic(baseUrl);
  await page.locator('#frames tr[data-status="invalid"]').waitFor();
  await page.locator("#connections tbody tr[data-dialect=codex] td").first().click();
  await page.locator("#ci-command").filter({ hasText: "validate" }).waitFor();
  // The stream of Codex deltas, opened: one row per streamed item.
  await page.locator("#frames tr.stream").first().click();
  await page.screenshot({ path: output });
  for (const socket of sockets) socket.close();
  console.log(`wrote ${output}`);
} finally {
  await browser.close();
  child.kill("SIGTERM");
  rmSync(workdir, { recursive: true, force: true });
}
