import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatSummary, summarizeProfile } from "./profile-summary.js";
import { repoRoot } from "./processes.js";
import { startNodeRelay } from "./node-relay.js";
import { measureReplicas } from "./replicas.js";
import { measureRoundTrip } from "./round-trip.js";
import { measureGatewayRound } from "./send-round.js";
import { gatewayAuth, startGateway, startHost, type GatewayAccess } from "./stack.js";
import { measureStreaming } from "./streaming.js";
import { measureTranslation } from "./translation.js";

/**
 * Where the gateway spends its time: each workload runs against a fresh gateway process started
 * with `node --cpu-prof`; when it exits (SIGTERM, clean shutdown) V8 writes the profile, and the
 * top self-time areas and functions are printed as Markdown. The .cpuprofile files stay in the
 * printed directory (open them in Chrome DevTools for the full call tree).
 *
 *   tsx bench/profile.ts [--no-build] [--top N] [--only WORKLOAD]... [--from FUNCTION]
 *
 * `--from sendOnce` (say) summarises only the samples from the first one inside that function on:
 * the workload without the gateway's start-up before it.
 *
 * `--only replicas` profiles the replica path instead (profileReplicas): processes of its own.
 *
 * `--relay node` profiles the no-op Node.js relay (bench/node-relay-server.mjs) on the `/tau`
 * workloads instead of the gateway: the floor the gateway's `/tau` rows are measured against, so
 * the two profiles side by side show what the gateway adds.
 *
 * It profiles the bundle users run (dist/tau-gateway.mjs running dist/tau-gateway.cjs), whose
 * functions are listed by line of the bundle; for time per source file run it with
 * TAU_BENCH_CLI=dist/src/cli/main.js (the same code, unbundled).
 */

const { values: flags } = parseArgs({
  options: {
    "no-build": { type: "boolean", default: false },
    top: { type: "string", default: "20" },
    only: { type: "string", multiple: true },
    from: { type: "string" },
    relay: { type: "string", default: "gateway" },
  },
  strict: true,
});

/** The workloads that talk Tau on `/tau` only, which the Node.js relay can stand in for. */
const TAU_WORKLOADS = new Set(["round-trip", "round-trip-1", "streaming"]);

const workloads: Record<string, (access: GatewayAccess, hostUrl: string) => Promise<unknown>> = {
  // The results say how many requests the profile covers (warm-ups and connecting not counted).
  "round-trip": async (access) => {
    const target = { name: "gateway", url: access.tau, headers: access.headers };
    return [await measureRoundTrip(target, 1, { warmupMs: 500, durationMs: 3000 }), await measureRoundTrip(target, 32, { warmupMs: 500, durationMs: 3000 })];
  },
  "round-trip-1": (access) => measureRoundTrip({ name: "gateway", url: access.tau, headers: access.headers }, 1, { warmupMs: 500, durationMs: 3000 }),
  streaming: (access) => measureStreaming({ name: "gateway", url: access.tau, headers: access.headers }, 10_000, 5),
  translation: async (access, hostUrl) => {
    await measureTranslation(access, hostUrl, 1, 10_000);
    await measureTranslation(access, hostUrl, 10, 10_000);
  },
  "fan-out": async (access, hostUrl) => {
    await measureTranslation(access, hostUrl, 100, 10_000);
    await measureTranslation(access, hostUrl, 100, 10_000);
  },
  "send-round": (access) => measureGatewayRound(access, { warmupRounds: 20, rounds: 300 }),
  // The same round at the end of a long session (turns 800–1,000): what still grows with the session shows here.
  "send-round-long": (access) => measureGatewayRound(access, { warmupRounds: 800, rounds: 200 }),
};

/**
 * The replica path: 30 Ask subscribers spread over 3 replicas on one Redis, each replica (and the
 * memory replica beside them) profiled on its own: replica-0 holds the host's lease and
 * translates, the others read the events from the store.
 */
async function profileReplicas(root: string): Promise<void> {
  const dirOf = (replica: number) => join(root, "replicas", replica < 0 ? "memory" : `replica-${replica}`);
  const outcome = await measureReplicas(
    { subscribers: 30, deltas: 10_000, counts: [3], rounds: 2, nodeFlags: (replica) => ["--cpu-prof", "--cpu-prof-dir", dirOf(replica)] },
    (line) => process.stderr.write(`${line}\n`),
  );
  if (outcome.note) throw new Error(outcome.note);
  for (const r of outcome.results) process.stderr.write(`${r.store} ×${r.replicas}: ${r.gatewayCpuUsPerDelta} µs/delta, ${Math.round(r.deltasPerSecond)} deltas/s\n`);
  for (const replica of [-1, 0, 1, 2]) {
    const dir = dirOf(replica);
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no profile written in ${dir}`);
    process.stdout.write(`${formatSummary(`replicas: ${replica < 0 ? "memory replica" : `replica ${replica}`} (${join(dir, file)})`, summarizeProfile(join(dir, file), Number(flags.top), flags.from))}\n`);
  }
}

async function main(): Promise<void> {
  if (!flags["no-build"]) spawnSync("npm", ["run", "build", "--silent"], { cwd: repoRoot, stdio: "inherit" });
  const root = mkdtempSync(join(tmpdir(), "tau-gateway-profiles-"));
  if (flags.only?.includes("replicas")) {
    await profileReplicas(root);
    if (flags.only.length === 1) return;
  }
  const auth = gatewayAuth();
  const host = await startHost();
  const hostUrl = host.match[1]!;
  try {
    const onNode = flags.relay === "node";
    if (!onNode && flags.relay !== "gateway") throw new Error(`--relay is gateway or node, not ${flags.relay}`);
    const chosen = Object.entries(workloads).filter(([name]) => (!flags.only?.length || flags.only.includes(name)) && (!onNode || TAU_WORKLOADS.has(name)));
    if (!chosen.length) throw new Error(`no workload named ${flags.only?.join(", ")}; there are ${Object.keys(workloads).join(", ")}`);
    for (const [name, run] of chosen) {
      const dir = join(root, name);
      process.stderr.write(`profile: ${name}\n`);
      const nodeFlags = ["--cpu-prof", "--cpu-prof-dir", dir];
      const relay = onNode ? await startNodeRelay(hostUrl, nodeFlags) : undefined;
      const gateway = relay ? undefined : await startGateway({ upstream: hostUrl, auth, nodeFlags });
      try {
        const result = await run(gateway?.access ?? { http: "", rpc: "", tau: relay!.url, headers: {} }, hostUrl);
        // How much work the profile covers, to read its milliseconds per request or message.
        process.stderr.write(`profile: ${name} done: ${JSON.stringify(result, (key, value) => (key === "runs" ? undefined : value))}\n`);
      } finally {
        await (gateway?.process ?? relay!).stop();
      }
      const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
      if (!file) throw new Error(`no profile written in ${dir}`);
      process.stdout.write(`${formatSummary(`${name} (${join(dir, file)})`, summarizeProfile(join(dir, file), Number(flags.top), flags.from))}\n`);
    }
  } finally {
    await host.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`profile: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
