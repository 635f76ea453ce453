#!/usr/bin/env node
// A client's contract test, end to end: start tau-gateway on its embedded Tau host, recording
// every connection; run the client (here a minimal Ask client over WebSocket: a session, a turn,
// an error answer); stop the gateway; validate what was recorded and write a JUnit report.
//
//   node client-test.mjs [REPORT_DIR]        (default: ./contract-report)
//   GATEWAY_URL=ws://HOST:PORT node client-test.mjs
//                                            (the client alone, against a gateway started by
//                                            the caller, as github-workflow.yml's `npm test` step)
//
// The gateway is the tau-gateway package installed beside this file (npm install --save-dev
// tau-gateway, see docs/contract-tests.md), run as `node <its bin>`: one process, so the SIGTERM
// that stops it reaches it and its exit means every recording is complete. TAU_GATEWAY_BIN=FILE
// runs another build. Exit status: validate's (0 every message valid, 1 some invalid), or 2 when
// the gateway or the client fails.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import WebSocket from "ws";

/** The installed package's `bin`, as npm links it into node_modules/.bin. */
function installedBin() {
  const manifest = createRequire(import.meta.url).resolve("tau-gateway/package.json");
  return join(dirname(manifest), JSON.parse(readFileSync(manifest, "utf8")).bin["tau-gateway"]);
}

const gatewayCommand = [process.execPath, process.env.TAU_GATEWAY_BIN ?? installedBin()];
const tauGateway = (args, options) => spawn(gatewayCommand[0], [...gatewayCommand.slice(1), ...args], options);

/** Starts `tau-gateway serve --record` on a free port; resolves with its address once it listens. */
function startGateway(recordings) {
  const child = tauGateway(["serve", "--port", "0", "--record", recordings, "--log-level", "warn"], { stdio: ["ignore", "inherit", "pipe"] });
  return new Promise((resolvePromise, reject) => {
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
      const listening = /tau-gateway listening on (http:\/\/\S+)/.exec(stderr);
      if (listening) resolvePromise({ child, url: listening[1].replace("http://", "ws://") });
    });
    child.once("exit", (code) => reject(new Error(`tau-gateway serve exited with ${code} before listening`)));
  });
}

/** The client under test: a minimal Ask JSON-RPC client. */
async function runClient(url) {
  const socket = new WebSocket(`${url}/rpc`);
  await new Promise((ok, fail) => socket.once("open", ok).once("error", fail));
  let nextId = 1;
  const pending = new Map();
  const events = [];
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.method === "session/event") events.push(message.params.event);
    else if (pending.has(message.id)) pending.get(message.id)(message);
  });
  const call = (method, params) =>
    new Promise((answer) => {
      const id = nextId++;
      pending.set(id, answer);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  const until = async (found) => {
    for (let waited = 0; !found(); waited += 20) {
      if (waited > 30_000) throw new Error("timed out waiting for the turn to end");
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  await call("initialize", { client: { name: "client-ci-example", version: "1.0.0" } });
  const { result } = await call("session/create", {});
  const sessionId = result.session.sessionId;
  await call("session/subscribe", { sessionId });
  const sent = await call("session/send", { sessionId, content: "Hello from CI" });
  await until(() => events.some((e) => e.type === "turn.completed" && e.payload.turnId === sent.result.turnId));
  // A request the gateway refuses is part of the contract too: its error answer is recorded and checked.
  const refused = await call("session/events", { sessionId: "no-such-session" });
  if (!refused.error) throw new Error("expected an error for an unknown session");
  socket.close();
  await new Promise((r) => socket.once("close", r));
}

if (process.env.GATEWAY_URL) {
  await runClient(process.env.GATEWAY_URL).then(
    () => console.log(`client test passed against ${process.env.GATEWAY_URL}`),
    (err) => {
      console.error(`client test failed: ${err.message}`);
      process.exitCode = 2;
    },
  );
} else {
  process.exit(await contractTest(resolve(process.argv[2] ?? "contract-report")));
}

/** The whole contract test: the gateway started recording, the client, the gateway stopped, the recordings validated. */
async function contractTest(reportDir) {
  const recordings = join(reportDir, "recordings");
  rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(recordings, { recursive: true });
  let status = 2;
  const { child, url } = await startGateway(recordings);
  try {
    await runClient(url);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    const files = readdirSync(recordings).map((name) => join(recordings, name));
    const validate = spawnSync(gatewayCommand[0], [...gatewayCommand.slice(1), "validate", "--format", "junit", ...files], { encoding: "utf8" });
    writeFileSync(join(reportDir, "junit.xml"), validate.stdout);
    process.stderr.write(validate.stderr);
    status = validate.status ?? 2;
    console.log(`${files.length} recording(s) validated; JUnit report: ${join(reportDir, "junit.xml")}`);
  } catch (err) {
    console.error(`client test failed: ${err.message}`);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
  return status;
}
