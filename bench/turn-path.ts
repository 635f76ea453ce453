/**
 * How a Codex `turn/start` reaches Tau: the src/ files whose functions run from the moment the
 * client's WebSocket message is sent to the gateway's TauUpstream sending `session.submit`, and
 * the call stack at that send. V8's precise coverage (call counts, reset as the message goes out,
 * read synchronously at the send) on a thread the connection has open, one embedded host, a warm
 * process (one turn before the measured one). Run: `npx tsx bench/turn-path.ts`.
 */
import { Session } from "node:inspector";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { TauUpstream } from "../src/tau/upstream.js";
import { startTestGateway } from "../test/support/gateway.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const inspector = new Session();
inspector.connect();
const post = <T>(method: string, params?: object): T => {
  let result: T | undefined;
  inspector.post(method, params ?? {}, (error, value) => {
    if (error) throw error;
    result = value as T;
  });
  return result!;
};

interface Coverage {
  result: Array<{ url: string; functions: Array<{ functionName: string; ranges: Array<{ count: number }> }> }>;
}

let measuring = false;
let taken: { coverage: Coverage; stack: string } | undefined;
const proto = TauUpstream.prototype as unknown as { sendNow: (method: string, ...rest: unknown[]) => unknown };
const sendNow = proto.sendNow;
proto.sendNow = function (this: unknown, method: string, ...rest: unknown[]) {
  if (measuring && method === "session.submit" && !taken) {
    taken = { coverage: post<Coverage>("Profiler.takePreciseCoverage"), stack: new Error().stack ?? "" };
    measuring = false;
  }
  return sendNow.call(this, method, ...rest);
};

const gw = await startTestGateway();
const socket = new WebSocket(gw.codexUrl);
await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
let nextId = 1;
const waiting = new Map<number, (message: any) => void>();
const notified: Array<(message: any) => boolean> = [];
socket.on("message", (data) => {
  const message = JSON.parse(String(data));
  if (message.id !== undefined && !message.method) waiting.get(message.id)?.(message);
  for (const [i, wait] of notified.entries()) if (wait(message)) notified.splice(i, 1);
});
const request = (method: string, params: object) =>
  new Promise<any>((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    socket.send(JSON.stringify({ id, method, params }));
  });
const completed = () => new Promise<void>((resolve) => notified.push((m) => (m.method === "turn/completed" ? (resolve(), true) : false)));

await request("initialize", { clientInfo: { name: "measure", version: "1" } });
socket.send(JSON.stringify({ method: "initialized" }));
const { result } = await request("thread/start", {});
const threadId = result.thread.id as string;
const turn = async (text: string) => {
  const done = completed();
  await request("turn/start", { threadId, input: [{ type: "text", text }] });
  await done;
};
await turn("warm up");
await turn("warm up again");
await new Promise((resolve) => setTimeout(resolve, 300));

post("Profiler.enable");
post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
post("Profiler.takePreciseCoverage"); // resets the counts
measuring = true;
await turn("measured");
post("Profiler.stopPreciseCoverage");

const files = new Map<string, string[]>();
for (const script of taken!.coverage.result) {
  if (!script.url.startsWith("file://")) continue;
  const path = relative(root, fileURLToPath(script.url));
  if (!path.startsWith("src/") || path.startsWith("src/host/")) continue;
  // The module's own top-level function ran when it was loaded, before the counts were reset.
  const ran = script.functions.filter((f) => f.ranges[0]!.count > 0).map((f) => f.functionName || "(anonymous)");
  if (ran.length) files.set(path, ran);
}
const folders = new Map<string, number>();
for (const path of files.keys()) {
  const folder = path.split("/")[1]!;
  folders.set(folder, (folders.get(folder) ?? 0) + 1);
}
console.log(`files: ${files.size} in ${folders.size} folders (${[...folders].map(([f, n]) => `${f} ${n}`).join(", ")})`);
for (const [path, ran] of [...files].sort()) console.log(`  ${path}: ${ran.join(", ")}`);
console.log("stack at the send:");
console.log(
  taken!.stack
    .split("\n")
    .slice(1)
    .map((line) => line.replace(`file://${root}`, ""))
    .join("\n"),
);
socket.close();
await gw.stop();
