import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { busyMachineNote, machineInfo, wasBusy } from "./machine.js";
import { connectionsWithinLimit, measureIdleConnections, openFileLimit, type MemoryResult } from "./memory.js";
import { measurePatternValidation, type PatternValidationResult } from "./patterns.js";
import { buildCheckout } from "./build.js";
import { compareWithRef } from "./compare.js";
import { parseRounds } from "./compare-plan.js";
import { repoRoot } from "./processes.js";
import { SECTIONS, selectSections, type Section } from "./sections.js";
import { measureHostileInputs, type HostileResult } from "./hostile.js";
import { computeRatios, latestMarkdown, markdownReport } from "./report.js";
import type { BenchResults } from "./bench-results.js";
import { measureRoundTrip, type RoundTripResult, type Target } from "./round-trip.js";
import { measureDirectRound, measureGatewayRound, type SendRoundResult } from "./send-round.js";
import { gatewayAuth, startStack } from "./stack.js";
import { measureStartup, type StartupResult } from "./startup.js";
import { measureStreaming, type StreamingSummary } from "./streaming.js";
import { codexExecutable, measureCodexAppServer, measureGatewayAppServer, type CodexPeerResult } from "./codex-peer.js";
import { measureDialectTranslation } from "./dialect-translation.js";
import { startNodeRelay, type RunningNodeRelay } from "./node-relay.js";
import { measureReplicas, type ReplicaResult } from "./replicas.js";
import { measureFanOutCurve, type FanOutResult } from "./fan-out.js";
import { measureSessionScale, type SessionScaleResult } from "./sessions.js";
import { measureTranslation, type TranslationResult } from "./translation.js";
import { measureValidation, type ValidationBenchResult } from "./validation.js";
import { round } from "./stats.js";
import { reportLingeringHandles } from "./lingering.js";
import { UsageError } from "./usage-error.js";

/**
 * `npm run bench`: builds, starts the Tau host, the gateway and (when installed) nginx as separate
 * processes, and measures what the gateway costs on top of talking to the host directly or through
 * a plain proxy. Prints Markdown tables and writes bench/results/<time>.json, latest.json and
 * latest.md (the same tables, which the README links to).
 * Benchmarks measure; they assert nothing about timings.
 *
 * Options: --quick (shorter windows, fewer items: for trying the harness, not for reporting),
 * --no-build (use the existing dist/), --json-out FILE (write the results there only),
 * --only SECTION[,SECTION] (just those parts: sections.ts), --compare REF [--rounds N] (this build
 * against REF's, alternated in one series: compare.ts).
 */

const USAGE = `usage: npm run bench -- [--quick] [--no-build] [--json-out FILE] [--only SECTION[,SECTION]] [--compare REF [--rounds N]]
  sections: ${SECTIONS.join(", ")}
`;

/** The options and the sections they select, or the usage (on stdout for --help, exit 0; on stderr with what was wrong, exit 2). */
function readFlags() {
  try {
    const { values } = parseArgs({
      options: {
        quick: { type: "boolean", default: false },
        "no-build": { type: "boolean", default: false },
        "json-out": { type: "string" },
        compare: { type: "string" },
        rounds: { type: "string" },
        only: { type: "string", multiple: true },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    return { flags: values, sections: selectSections(values.only) };
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(2);
  }
}

const { flags, sections } = readFlags();

const quick = flags.quick === true;
const run = (section: Section) => sections.has(section);
/** Not every part measured: like --quick, not for bench/results/latest.json. */
const partial = sections.size < SECTIONS.length;
const settings = {
  warmupMs: quick ? 200 : 500,
  durationMs: quick ? 1000 : 3000,
  streamingDeltas: 10_000,
  streamingRuns: quick ? 1 : 9,
  peerRuns: quick ? 2 : 5,
  sendRounds: quick ? 50 : 200,
  sendWarmupRounds: quick ? 5 : 20,
  validationLines: quick ? 20_000 : 200_000,
  patternRuns: quick ? 3 : 9,
  idleConnections: quick ? 600 : 3000,
  startupRuns: 3,
  replicaSubscribers: 30,
  replicaRounds: quick ? 1 : 3,
  /** The largest of the session-scale sizes (10, 100, 1,000 sessions with 3 clients each). */
  scaleSessions: quick ? 100 : 1000,
};

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

async function main(): Promise<void> {
  if (flags.compare !== undefined) {
    if (flags["json-out"] !== undefined) throw new UsageError("--json-out is for single runs; --compare writes bench/results/compare-<time>.json");
    return compareWithRef({ ref: flags.compare, rounds: parseRounds(flags.rounds ?? "3"), quick, only: partial ? [...sections] : undefined, build: !flags["no-build"], log });
  }
  if (flags.rounds !== undefined) throw new UsageError("--rounds goes with --compare <ref>");
  const began = Date.now();
  const machine = machineInfo();
  const notes: string[] = [];
  const buildNote = flags["no-build"] ? undefined : buildCheckout(repoRoot, log);
  if (buildNote) notes.push(buildNote);
  if (quick) notes.push("--quick run: shorter windows and smaller workloads; not for reporting");
  if (partial) notes.push(`--only ${[...sections].join(",")}: the other parts were not measured`);
  if (wasBusy(machine)) notes.push(busyMachineNote(machine));

  const auth = gatewayAuth();
  notes.push(auth.note);
  const roundTrip: RoundTripResult[] = [];
  const streaming: StreamingSummary[] = [];
  const translation: TranslationResult[] = [];
  const sendRound: SendRoundResult[] = [];
  const codexPeer: CodexPeerResult[] = [];
  const fanOut: FanOutResult[] = [];
  let nginxVersion: string | null = null;

  const stack = await startStack();
  let nodeRelay: RunningNodeRelay | undefined;
  try {
    if (stack.nginxNote) notes.push(stack.nginxNote);
    nginxVersion = stack.nginx?.version ?? null;
    const hostPid = stack.host.pid;
    const targets: Target[] = [{ name: "direct", url: stack.hostUrl, hostPid }];
    if (stack.nginx) targets.push({ name: "nginx", url: stack.nginx.url, relayPids: [stack.nginx.pid], hostPid });
    nodeRelay = await startNodeRelay(stack.hostUrl);
    targets.push({ name: "node", url: nodeRelay.url, relayPids: [nodeRelay.pid], hostPid });
    targets.push({ name: "gateway", url: stack.access.tau, headers: stack.access.headers, relayPids: [stack.gateway.pid], hostPid });

    for (const clients of run("round-trip") ? [1, 32] : []) {
      for (const target of targets) {
        log(`round trip: ${target.name}, ${clients} client(s)`);
        roundTrip.push(await measureRoundTrip(target, clients, settings));
      }
    }
    for (const target of run("streaming") ? targets : []) {
      log(`streaming: ${target.name}`);
      streaming.push(await measureStreaming(target, settings.streamingDeltas, settings.streamingRuns));
    }
    // One turn lasts a fraction of a second, so single runs scatter: say how much.
    if (run("streaming")) notes.push(
      `streaming: median of ${settings.streamingRuns} turns; runs ranged ${streaming
        .map((s) => `${Math.min(...s.runs).toLocaleString("en-US")}–${Math.max(...s.runs).toLocaleString("en-US")} (${s.target})`)
        .join(", ")} messages/s`,
    );
    if (run("translation")) {
      log("translation: warm-up");
      await measureTranslation(stack.access, stack.hostUrl, 1, 1000);
    }
    for (const subscribers of run("translation") ? [1, 10, 100] : []) {
      log(`translation: ${subscribers} subscriber(s)`);
      translation.push(await measureTranslation(stack.access, stack.hostUrl, subscribers, settings.streamingDeltas, stack.gateway.pid));
    }
    for (const dialect of run("translation") ? (["codex", "acp"] as const) : []) {
      log(`translation (${dialect}): warm-up`);
      await measureDialectTranslation(dialect, stack.access, stack.hostUrl, 1, 1000);
      for (const subscribers of [1, 10, 100]) {
        log(`translation (${dialect}): ${subscribers} connection(s)`);
        translation.push(await measureDialectTranslation(dialect, stack.access, stack.hostUrl, subscribers, settings.streamingDeltas, stack.gateway.pid));
      }
    }
    const codex = codexExecutable();
    if (!run("peer")) {
      // not asked for
    } else if (codex) {
      log(`peer: codex app-server against a mock model API, ${settings.peerRuns} turns`);
      codexPeer.push(await measureCodexAppServer(codex, settings.streamingDeltas, settings.peerRuns));
      log(`peer: tau-gateway app-server, ${settings.peerRuns} turns`);
      codexPeer.push(await measureGatewayAppServer(stack.hostUrl, settings.streamingDeltas, settings.peerRuns));
    } else {
      notes.push("codex app-server peer row skipped: no codex executable (npm ci in interop/, or TAU_BENCH_CODEX)");
    }
    const rounds = { warmupRounds: settings.sendWarmupRounds, rounds: settings.sendRounds, hostPid: stack.host.pid, gatewayPid: stack.gateway.pid };
    if (run("send-round")) {
      log(`send round: direct (session.submit), ${settings.sendRounds} rounds`);
      sendRound.push(await measureDirectRound(stack.hostUrl, rounds));
      log(`send round: gateway (Ask session/send → turn.completed), ${settings.sendRounds} rounds`);
      sendRound.push(await measureGatewayRound(stack.access, rounds));
    }
    if (run("fan-out")) {
      fanOut.push(...(await measureFanOutCurve({ hostUrl: stack.hostUrl, hostPid: stack.host.pid, auth, deltas: settings.streamingDeltas }, log)));
    }
  } finally {
    await nodeRelay?.stop();
    await stack.stop();
  }

  // Gateway replicas sharing Redis against one replica in memory: processes of their own (skipped without redis-server).
  const replicas: ReplicaResult[] = [];
  if (run("replicas")) {
    const replicaOutcome = await measureReplicas({ subscribers: settings.replicaSubscribers, deltas: settings.streamingDeltas, rounds: settings.replicaRounds }, log);
    if (replicaOutcome.note) notes.push(replicaOutcome.note);
    replicas.push(...replicaOutcome.results);
  }

  let sessionScale: SessionScaleResult[] | undefined;
  if (run("sessions")) {
    const sizes = [10, 100, 1000].filter((n) => n <= settings.scaleSessions);
    // 3 client sockets per session here and in the gateway, one upstream each through the Node.js relay.
    const fits = Math.floor((openFileLimit() - 200) / 8);
    if (sizes.some((n) => n > fits)) notes.push(`sessions: the open-file limit ${openFileLimit()} allows ${fits} sessions, not ${Math.max(...sizes)} (raise it with ulimit -n)`);
    sessionScale = await measureSessionScale(sizes.filter((n) => n <= fits), auth, log);
  }

  let validation: ValidationBenchResult | undefined;
  if (run("validation")) {
    log(`validation: ${settings.validationLines} lines`);
    validation = await measureValidation(settings.validationLines);
  }

  let patterns: PatternValidationResult[] = [];
  if (run("patterns")) {
    log("pattern validation: 1 MiB worst-case strings");
    patterns = measurePatternValidation(settings.patternRuns);
  }

  let hostile: HostileResult[] | undefined;
  if (run("hostile")) hostile = await measureHostileInputs(log);

  const memory: MemoryResult[] = [];
  if (run("memory")) {
    const within = connectionsWithinLimit(settings.idleConnections);
    if (within.note) notes.push(within.note);
    // A host of its own, so sessions left by the runs above do not weigh on it.
    const memoryStack = await startStack({ withNginx: false });
    try {
      await memoryStack.gateway.stop();
      for (const route of ["/tau", "/rpc"] as const) {
        log(`memory: ${within.count} idle connections on ${route}`);
        memory.push(await measureIdleConnections(route, within.count, memoryStack.hostUrl, auth));
      }
    } finally {
      await memoryStack.stop();
    }
  }

  let startup: StartupResult | undefined;
  if (run("startup")) {
    log("startup");
    startup = await measureStartup(settings.startupRuns, auth);
  }

  const results: BenchResults = {
    startedAt: new Date(began).toISOString(),
    durationSeconds: round((Date.now() - began) / 1000, 0),
    machine,
    nginx: nginxVersion,
    notes,
    settings,
    roundTrip,
    streaming,
    translation,
    replicas,
    codexPeer,
    sendRound,
    validation,
    patterns,
    hostile,
    memory,
    sessions: sessionScale,
    fanOut,
    startup,
    ratios: computeRatios({ roundTrip, streaming, sendRound }),
  };
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const name = `${results.startedAt.replace(/[:.]/g, "-")}.json`;
  process.stdout.write(`${markdownReport(results)}\n`);
  if (flags["json-out"] !== undefined) {
    // A run of a comparison (compare.ts), or anyone who wants the results elsewhere: not bench/results/.
    writeFileSync(flags["json-out"], text);
    log(`results written to ${flags["json-out"]}`);
    return;
  }
  if (quick || partial) {
    // Not for reporting: kept out of bench/results/.
    const path = join(tmpdir(), `tau-gateway-bench-quick-${name}`);
    writeFileSync(path, text);
    log(`results written to ${path}`);
    return;
  }
  const dir = join(repoRoot, "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "latest.json"), text);
  writeFileSync(join(dir, "latest.md"), latestMarkdown(results));
  log(`results written to bench/results/${name}, bench/results/latest.json and bench/results/latest.md`);
}

main()
  .catch((err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => reportLingeringHandles(log));
