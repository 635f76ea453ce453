#!/usr/bin/env node
// `tau-gateway` from this checkout (source, through tsx), for clients that spawn "<codexPath> app-server".
// With TAU_GATEWAY_INTEROP_TRANSCRIPT set, every message both ways is appended to that file as
// {"direction":"client"|"server","message":…} (the `tau-gateway validate` format). The gateway's
// output goes to the client chunk for chunk, as it was written, so the write timing clients
// depend on is unchanged.
"use strict";
const { spawn } = require("node:child_process");
const { appendFileSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..", "..");
const child = spawn(process.execPath, [join(root, "node_modules", "tsx", "dist", "cli.mjs"), join(root, "src", "cli", "main.ts"), ...process.argv.slice(2)], {
  stdio: ["pipe", "pipe", "inherit"],
});

const transcript = process.env.TAU_GATEWAY_INTEROP_TRANSCRIPT;
function tap(direction) {
  let rest = "";
  return (chunk) => {
    if (!transcript) return;
    rest += chunk.toString("utf8");
    const lines = rest.split("\n");
    rest = lines.pop();
    for (const line of lines) {
      if (line.trim() === "") continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        message = { unparsed: line };
      }
      appendFileSync(transcript, `${JSON.stringify({ direction, message })}\n`);
    }
  };
}

const fromClient = tap("client");
const fromServer = tap("server");
process.stdin.on("data", (chunk) => {
  fromClient(chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.stdout.on("data", (chunk) => {
  fromServer(chunk);
  process.stdout.write(chunk);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
