import type { Log } from "../../shared/log.js";
import type { TauUpstream } from "../../tau/upstream.js";
import type { CommandToolConfig, ReverseRequester } from "../interactions/index.js";
import { SessionRegistry } from "../session-registry.js";

export interface TauHostLinkOptions {
  /** The host's stable name (store/host-key.ts). */
  key: string;
  /** The bridge connection to the host: the one that advertises the gateway's client tools. */
  upstream: TauUpstream;
  retention?: number;
  interactionDeadlineMs: number;
  commandTools: CommandToolConfig[];
  reverse: ReverseRequester;
  log?: Log;
}

/**
 * One Tau host as the bridge sees it: its bridge connection and the records of the sessions that
 * live on it. Tau sends a session's client-tool calls to the connection that advertised the tools,
 * so each host's records hear only their own connection; a host that drops ends only its own
 * sessions' interactions, and only its own sessions resync when it comes back.
 */
export class TauHostLink {
  readonly key: string;
  readonly upstream: TauUpstream;
  readonly sessions: SessionRegistry;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(options: TauHostLinkOptions) {
    this.key = options.key;
    this.upstream = options.upstream;
    this.sessions = new SessionRegistry({
      upstream: options.upstream,
      retention: options.retention,
      interactionDeadlineMs: options.interactionDeadlineMs,
      commandTools: options.commandTools,
      reverse: options.reverse,
      log: options.log,
    });
  }

  get url(): string {
    return this.upstream.url;
  }

  /** Wires the connection's messages and reconnects to the session records. */
  start(): void {
    const { upstream, sessions } = this;
    this.unsubscribe.push(
      upstream.onMessage((message) => sessions.route(message)),
      upstream.onDisconnected(() => sessions.cancelAllInteractions("the connection to the Tau host was lost")),
      upstream.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
    );
  }

  /** Stops routing and ends every pending interaction of the host's sessions. */
  close(reason: string): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.sessions.cancelAllInteractions(reason);
  }
}
