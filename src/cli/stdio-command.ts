import { gatewayVersion } from "../gateway/version.js";
import { startTracing, tracingFlushBudget } from "../shared/tracing.js";
import { connectionGate, refuseOnceStopping } from "../transports/call-gates.js";
import { BridgeStack } from "./bridge-stack.js";
import { readApprovalPolicy, readCommandSettings, readCommandTools, startupMessage, stderrLog } from "./command-setup.js";
import type { LoadedDialect, StdioRun } from "./dialects/descriptor.js";
import { GATEWAY_ROUTES } from "./dialects/loaded.js";
import { stdioCommandSettings, type SettingSpecs } from "./dialects/stdio-settings.js";
import { exitStatus, type CommandIO } from "./io.js";
import { closeRecordingFile, openRecordingFile } from "./record-settings.js";
import { relayToGateway, remoteSettings } from "./remote.js";
import { onStopSignals } from "./stop-signals.js";
import type { SettingValues } from "./settings.js";

/**
 * The one skeleton of every stdio command (`stdio`, `app-server`, `acp`): what differs between
 * them is their dialect's descriptor. Settings from flags and environment (the common ones, the
 * dialect's own, `--remote`); with `--remote`, a relay to a running gateway and nothing else;
 * otherwise tracing (when the OTEL_* variables ask for it), `--record FILE`, the bridge stack (the
 * embedded host or the upstream hosts, the core, the dialects), the stop signals, then the
 * dialect's own serving on stdin/stdout; and at the end everything closed in reverse, the spans
 * still buffered exported last.
 */
export async function runStdioCommand(dialect: LoadedDialect, argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const code = await exitStatus(() => stdioCommand(dialect, argv, io, env));
  // Everything is closed, and the output got its grace to flush: what is still unread the parent
  // will never read (it stopped reading stdout), and would hold the process for ever.
  const unread = io.unreadStdout?.() ?? 0;
  if (unread > 0 && io.exitNow) {
    io.stderr(`${JSON.stringify({ level: 40, time: Date.now(), component: `tau-gateway-${dialect.command}`, unreadBytes: unread, msg: "stdout is not read: exiting without the output the parent left unread" })}\n`);
    io.exitNow(code);
  }
  return code;
}

async function stdioCommand(dialect: LoadedDialect, argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const { command, descriptor } = dialect;
  const common = { ...remoteSettings(dialect.route, GATEWAY_ROUTES), ...stdioCommandSettings };
  // The dialect's own settings are its serve's business: here only the common ones are read.
  const own: SettingSpecs = descriptor.command.settings;
  const settings: SettingValues<typeof common> = readCommandSettings(command, descriptor.command.usage, argv, env, { ...common, ...own }, io);
  if (settings.remote !== undefined) return relayToGateway(command, descriptor.command.relay, dialect.name, { ...settings, remote: settings.remote }, argv, io);
  const commandTools = await readCommandTools(command, settings.toolsConfig, io);
  // Its one client has no token, so no principal: a rule only principals can satisfy would never let its calls run.
  const approvalPolicy = await readApprovalPolicy(command, settings.approvalPolicyFile, io, {
    withoutPrincipals: `the client of \`tau-gateway ${command}\` has no token (serve the policy with \`tau-gateway serve --tokens-file\`)`,
  });
  const log = stderrLog(command, settings.logLevel);

  // Watched from the start: a signal during start-up stops the command as soon as it is up.
  const signals = watchStopSignals();
  signals.stop.addEventListener("abort", () => log("info", "stopping: new requests are refused; a second signal stops waiting for work in flight", { signal: signals.stop.reason }), { once: true });
  // Before anything that calls Tau, so every call is traced (when the OTEL_* variables ask for it).
  const stopTracing = await startTracing(env, gatewayVersion(), log);
  const tracingBudgetMs = tracingFlushBudget(settings.drainTimeout);
  const recording = await openRecordingFile(command, settings, dialect.name, io, log).catch(async (err: unknown) => {
    signals.unwatch();
    await stopTracing(tracingBudgetMs);
    throw err;
  });
  const stack = new BridgeStack();
  try {
    try {
      // Sessions of a dialect whose command has no --default-cwd name their own (ACP): the current directory is never used.
      await stack.start({ defaultCwd: process.cwd(), ...settings, ...(approvalPolicy ? { approvalPolicy } : {}) }, commandTools, log);
    } catch (err) {
      io.stderr(`tau-gateway ${command}: ${startupMessage(err)}\n`);
      return 1;
    }
    // Once input has ended the command is stopping anyway: the next signal stops the waiting.
    io.stdin.once("end", signals.stopping);
    const run: StdioRun<typeof settings> = {
      settings,
      io,
      log,
      core: stack.core!,
      upstream: stack.upstream!,
      recording,
      // Once stopping, a request gets the retryable refusal of a draining gateway, never silence.
      gate: (drain) => connectionGate(dialect.name, { maxInflight: settings.maxInflight, drain: drain ?? refuseOnceStopping(signals.stop) }),
      stop: signals.stop,
      hurry: signals.hurry,
      stopping: signals.stopping,
    };
    return await descriptor.command.serve(stack.surfaceOf(dialect.name), run);
  } finally {
    signals.unwatch();
    io.stdin.off("end", signals.stopping);
    // Read no more: an input left open (its writer still there) would keep the process running.
    io.stdin.destroy();
    await stack.close();
    await closeRecordingFile(recording);
    // Last, so the spans of the shutdown (turns interrupted, sessions unobserved) are exported too.
    await stopTracing(tracingBudgetMs).catch((err: unknown) => log("warn", "exporting the last spans failed", { err }));
  }
}

/**
 * SIGINT and SIGTERM (and the end of npm's shell, stop-signals.ts) for the command's lifetime: the first one aborts `stop` (the command starts
 * stopping), with the signal as its reason; one that arrives once it is stopping anyway (a second
 * signal, or one after stdin ended) aborts `hurry`.
 */
function watchStopSignals() {
  const stop = new AbortController();
  const hurry = new AbortController();
  let stopping = false;
  const unwatch = onStopSignals((cause) => {
    if (stopping) return hurry.abort(cause);
    stopping = true;
    stop.abort(cause);
  });
  return { stop: stop.signal, hurry: hurry.signal, stopping: () => void (stopping = true), unwatch };
}
