#!/usr/bin/env node
import { processIO } from "./io.js";
import { run } from "./run.js";
import { errorText } from "../shared/unknown-values.js";

// The one place commands meet the real process: its streams, its environment, its exit status.
run(process.argv.slice(2), processIO(), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tau-gateway: ${errorText(err)}\n`);
    process.exitCode = 1;
  },
);
