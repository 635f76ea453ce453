#!/usr/bin/env node
import { run } from "./run.js";

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tau-gateway: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
