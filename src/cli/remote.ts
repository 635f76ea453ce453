import type { LevelWithSilent } from "pino";
import { GatewayRelay } from "../relay/gateway-relay.js";
import { displayUrl } from "../relay/gateway-socket.js";
import { NdjsonStream } from "../transports/ndjson-stream.js";
import type { RelayDialect } from "../relay/relay-dialect.js";
import type { RecordedDialect } from "../transports/recording/transcript-lines.js";
import { untilAborted } from "../transports/stop-signal.js";
import { stderrLog } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { closeRecordingFile, openRecordingFile } from "./record-settings.js";
import { envName, nonEmpty, type SettingSpec } from "./settings.js";
import { onStopSignals } from "./stop-signals.js";

/**
 * `--remote URL` of the stdio commands (`acp`, `app-server`, `stdio`): instead of serving a bridge
 * of their own, they relay stdin/stdout to a running gateway's WebSocket route for their dialect,
 * so an editor or SDK that spawns them shares that gateway's sessions (docs/remote.md).
 */

/** How long a line waits for a lost gateway connection to come back before its requests are answered -32012. */
const HOLD_MS = 30_000;

/**
 * The URL of `route` on the gateway at `text`: its base URL (`ws://HOST:PORT`, `wss://…`, or
 * `http(s)://…`, turned into ws(s)), with a reverse proxy's path prefix if any, to which the route
 * is added; a URL that already ends with the route is taken as it is. A URL ending in one of
 * `otherRoutes` (the gateway's other WebSocket routes) is a mistake.
 */
export function remoteRoute(route: string, otherRoutes: readonly string[]): (text: string) => string {
  const namedRoutes = otherRoutes.filter((other) => other !== "/" && other !== route);
  return (text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error("must be the gateway's URL, e.g. ws://127.0.0.1:8080");
    }
    const scheme = { "ws:": "ws:", "wss:": "wss:", "http:": "ws:", "https:": "wss:" }[url.protocol];
    if (scheme === undefined) throw new Error("must be a ws://, wss://, http:// or https:// URL");
    if (url.searchParams.has("access_token")) throw new Error("put the token in --remote-token, not in the URL");
    const path = url.pathname.replace(/\/+$/, "");
    const other = namedRoutes.find((named) => path.endsWith(named));
    if (other !== undefined) throw new Error(`names the ${other} route; give the gateway's base URL (ws://HOST:PORT), this command adds ${route}`);
    const full = new URL(url.toString());
    full.protocol = scheme;
    full.pathname = route !== "/" && path.endsWith(route) ? path : `${path}${route}`;
    return full.toString();
  };
}

/** `--remote` and `--remote-token` of a stdio command whose dialect's route is `route`. */
export const remoteSettings = (route: string, otherRoutes: readonly string[]) =>
  ({
    // A token a user put in the URL (refused) or its password is never repeated in the error.
    remote: { flag: "remote", parse: remoteRoute(route, otherRoutes), shown: displayUrl },
    remoteToken: { flag: "remote-token", parse: nonEmpty, secret: true },
  }) satisfies Record<string, SettingSpec<unknown>>;

/** The usage lines of remoteSettings. */
export const REMOTE_USAGE = `  --remote URL                  relay stdin/stdout to the gateway at URL (ws://HOST:PORT, or its
                                http:// address) and share its sessions, serving nothing here
                                (see docs/remote.md) ${envName("remote")}
  --remote-token TOKEN          with --remote: sent as Authorization: Bearer TOKEN ${envName("remote-token")}`;

/** What a relaying command still uses of its settings; the flags of the others configure a local bridge. */
const RELAY_FLAGS = ["remote", "remote-token", "max-message-bytes", "drain-timeout", "log-level", "record", "record-max-file-bytes", "help"];

export interface RelaySettings {
  remote: string;
  remoteToken: string | undefined;
  maxMessageBytes: number;
  drainTimeout: number;
  logLevel: LevelWithSilent;
  /** `--record FILE`: the client's messages both ways, as the local command records them. */
  record?: string;
  recordMaxFileBytes: number;
}

/**
 * Runs the command as a relay to the gateway at `settings.remote` until stdin ends (once every
 * request passed on is answered, or --drain-timeout has passed), stdout goes away, or SIGTERM /
 * SIGINT (the same drain; a second signal stops waiting): exit 0. Exit 1 when the gateway cannot be
 * reached or refuses the token at start, or refuses it on a reconnect later. A flag that only a
 * local bridge uses is a usage error (exit 2), since it would silently do nothing.
 */
export function relayToGateway(command: string, dialect: RelayDialect, dialectName: RecordedDialect, settings: RelaySettings, argv: string[], io: CommandIO): Promise<number> {
  return exitStatus(() => relay(command, dialect, dialectName, settings, argv, io));
}

async function relay(command: string, dialect: RelayDialect, dialectName: RecordedDialect, settings: RelaySettings, argv: string[], io: CommandIO): Promise<number> {
  const local = argv.map((arg) => /^--([^=]+)/.exec(arg)?.[1]).find((flag) => flag !== undefined && !RELAY_FLAGS.includes(flag));
  if (local !== undefined) {
    io.stderr(`tau-gateway ${command}: --${local} has no effect with --remote: the gateway's own settings apply\nRun "tau-gateway ${command} --help" for the options.\n`);
    return 2;
  }
  const log = stderrLog(command, settings.logLevel);

  const recording = await openRecordingFile(command, settings, dialectName, io, log);
  let relay: GatewayRelay;
  try {
    relay = await GatewayRelay.open({ dialect, url: settings.remote, token: settings.remoteToken, log, holdMs: HOLD_MS, output: process.stdout });
  } catch (err) {
    io.stderr(`tau-gateway ${command}: ${(err as Error).message}\n`);
    recording?.close();
    return 1;
  }
  log("info", "relaying to the gateway", { dialect: dialectName });

  const stopping = new AbortController();
  const hurry = new AbortController();
  const unwatchSignals = onStopSignals(() => (stopping.signal.aborted ? hurry.abort() : stopping.abort()));
  const stream = new NdjsonStream(io.stdin, process.stdout, (send) => relay.connection(send), {
    maxLineBytes: settings.maxMessageBytes,
    onError: (err) => log("error", "relaying a message failed", { err }),
    recording,
  });
  try {
    const why = await Promise.race([stream.ended, untilAborted(stopping.signal), relay.fatal]);
    stream.stopReading();
    if (why instanceof Error) {
      io.stderr(`tau-gateway ${command}: ${why.message}\n`);
      relay.failOpenRequests("the gateway refused the token");
      await stream.close();
      return 1;
    }
    log("info", "draining: waiting for the answers to requests passed on", { why, openRequests: relay.openRequests, drainTimeoutMs: settings.drainTimeout });
    // Nobody reads the answers any more: there is nothing to wait for.
    if (why !== "output closed") await Promise.race([stream.whenSettled(settings.drainTimeout), untilAborted(hurry.signal), relay.fatal]);
    relay.failOpenRequests("the relay stopped before the gateway answered");
    const { flushed } = await stream.close();
    // A parent that neither reads stdout nor closes it would keep the process alive for ever.
    if (!flushed) setTimeout(() => process.exit(0), 100).unref();
    return 0;
  } finally {
    unwatchSignals();
    await relay.close();
    await closeRecordingFile(recording);
  }
}
