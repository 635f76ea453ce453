/**
 * How a Codex `turn/start` reaches Tau: the src/ files whose functions run from the moment the
 * client's WebSocket message is sent to the gateway's TauUpstream sending `session.submit`, and
 * the call stack at that send. V8's precise coverage (call counts, reset as the message goes out,
 * read synchronously at the send) on a thread the connection has open, one embedded host, a warm
 * process (two turns before the measured one). Run: `npx tsx bench/turn-path.ts`.
 *
 * What counts as a file on the path (the first figure, the one the docs and commits quote): a file
 * of src/ (the embedded host's src/host/ aside: it is the upstream, not the gateway) any function
 * of which ran at least once in that window, anonymous functions, getters and the loader's
 * `__name` helper included (the module's own top level is not counted: it ran when the module was
 * loaded, before the reset). Nothing else runs in the window (the process is idle), so that is the
 * path. Two views beside it, never instead of it:
 * - "with a named function": only the files where a function with a name of the code's own ran
 *   (neither anonymous nor `__name`): a file whose only work was an inline callback drops out;
 * - "on the stack at the send": the distinct src/ files among the frames of the call stack at the
 *   send, async frames included (Error.stackTraceLimit lifted): what still waits for the send, not
 *   what ran and returned before it.
 * A back-and-forth (docs/development.md) is a lower layer calling up into a higher one before the
 * request is out (a callback handed down and called back); it is counted by reading the functions
 * listed per file and the stack, not by this script.
 */
import { Session } from "node:inspector";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { TauUpstream } from "../src/tau/upstream.js";
import { startTestGateway } from "../test/support/gateway.js";

// The whole stack at the send (V8 keeps 10 frames by default, which cut it short).
Error.stackTraceLimit = Infinity;
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
/** `N in F folders (folder n, …)` for a set of src/ paths. */
const byFolder = (paths: Iterable<string>): string => {
  const folders = new Map<string, number>();
  let count = 0;
  for (const path of paths) {
    const folder = path.split("/")[1]!;
    folders.set(folder, (folders.get(folder) ?? 0) + 1);
    count++;
  }
  return `${count} in ${folders.size} folders (${[...folders].map(([f, n]) => `${f} ${n}`).join(", ")})`;
};
const named = [...files].filter(([, ran]) => ran.some((name) => name !== "(anonymous)" && name !== "__name")).map(([path]) => path);
const stackLines = taken!.stack
  .split("\n")
  .slice(2) // the message, and this script's own wrapper of sendNow
  .map((line) => line.replace(`file://${root}`, "").replace(root, ""));
const onStack = new Set(stackLines.flatMap((line) => /\((?:\/)?(src\/[^:)]+):\d+:\d+\)/.exec(line)?.[1] ?? []).filter((path) => !path.startsWith("src/host/")));
console.log(`files: ${byFolder(files.keys())}`);
console.log(`  with a named function: ${byFolder(named)}`);
console.log(`  on the stack at the send: ${byFolder(onStack)}`);
for (const [path, ran] of [...files].sort()) console.log(`  ${path}: ${ran.join(", ")}`);
console.log("stack at the send:");
console.log(stackLines.join("\n"));
socket.close();
await gw.stop();
