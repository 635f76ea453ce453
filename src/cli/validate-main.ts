import { processIO } from "./io.js";
import { runValidate } from "./validate.js";
import { errorText } from "../shared/unknown-values.js";

// `tau-gateway validate …` as the launcher runs it (dist/tau-gateway-validate.cjs): the command
// alone, without the gateway's modules, which cost a check a fifth of its CPU and a third of its
// memory when it ran from the one bundle of every command. The same command as run.ts's.
runValidate(process.argv.slice(3), processIO()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tau-gateway: ${errorText(err)}\n`);
    process.exitCode = 1;
  },
);
