#!/usr/bin/env node
// Runs the `run:` steps of a GitHub Actions workflow's one job here, in the current folder, as the
// runner would: each with `bash --noprofile --norc -eo pipefail`, the job's `env:` in the
// environment (a variable already set here wins, so a caller can pick another port), the steps
// after a failed one skipped unless they say `if: always()`. `uses:` steps (checkout, setup-node,
// publishing) are the runner's and are skipped. Only the subset of YAML the workflow files of
// examples/ use is read: block scalars (`run: |`), plain scalars, one job.
//
//   node .ci/run-workflow.mjs WORKFLOW.yml      exit 0 when every step that ran passed
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node .ci/run-workflow.mjs WORKFLOW.yml");
  process.exit(2);
}
const lines = readFileSync(file, "utf8").split("\n");
const indentOf = (line) => line.length - line.trimStart().length;
const unquote = (value) => value.trim().replace(/^(["'])(.*)\1$/, "$2");

/** The value after `key:` on line i: a block scalar (`|`) as its lines, or the plain scalar. */
function valueAt(i, key) {
  const rest = lines[i].slice(lines[i].indexOf(`${key}:`) + key.length + 1).trim();
  if (rest !== "|") return unquote(rest);
  const own = indentOf(lines[i]);
  const body = [];
  for (let j = i + 1; j < lines.length && (lines[j].trim() === "" || indentOf(lines[j]) > own); j++) body.push(lines[j]);
  const cut = Math.min(...body.filter((l) => l.trim() !== "").map(indentOf));
  return body.map((l) => l.slice(cut)).join("\n").trimEnd();
}

// The job's env: the `env:` block one level under the job's name; the steps: `- ` items under `steps:`.
const env = {};
const steps = [];
let section;
let sectionIndent = 0;
for (let i = 0; i < lines.length; i++) {
  const line = lines[i];
  if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
  const indent = indentOf(line);
  const text = line.trim();
  if (section && indent <= sectionIndent) section = undefined;
  if (text === "env:" && indent >= 4 && !section) {
    section = "env";
    sectionIndent = indent;
  } else if (text === "steps:") {
    section = "steps";
    sectionIndent = indent;
  } else if (section === "env") {
    const [name, ...value] = text.split(":");
    env[name.trim()] = unquote(value.join(":"));
  } else if (section === "steps") {
    const item = text.startsWith("- ") ? text.slice(2) : text;
    if (text.startsWith("- ")) steps.push({});
    const step = steps.at(-1);
    const key = /^([\w-]+):/.exec(item)?.[1];
    if (key === "run" || key === "name" || key === "if" || key === "uses") step[key] = valueAt(i, key);
  }
}

let failed = 0;
for (const step of steps) {
  if (step.run === undefined) continue;
  const label = step.name ?? step.run.split("\n")[0];
  if (failed > 0 && step.if !== "always()") {
    console.log(`::: skipped (an earlier step failed): ${label}`);
    continue;
  }
  console.log(`::: ${label}`);
  const result = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], { stdio: "inherit", env: { ...env, ...process.env } });
  if (result.status !== 0) {
    console.log(`::: FAILED (${result.status ?? result.signal}): ${label}`);
    failed++;
  }
}
process.exit(failed === 0 ? 0 : 1);
