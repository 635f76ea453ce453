import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { MethodName } from "../../generated/tau-v18.js";
import { HOST_TOOL_NAMES, TAU_METHOD_ORDER } from "../registry/tau/index.js";
import type { LineLog } from "../shared/log.js";
import { TauCodec } from "../tau/codec.js";
import { checkSnapshotInvariants } from "../tau/delta-applier.js";
import { ClientToolBroker } from "./client-tool-broker.js";
import { HostConnection } from "./connection.js";
import type { ClientConnection, HostContext } from "./host-context.js";
import type { ResolvedHostOptions } from "./host-options.js";
import { OutgoingMessageError } from "./outgoing.js";
import { SessionStore } from "./persistence.js";
import { SessionRegistry } from "./session-registry.js";
import type { RuntimeDependencies } from "./session-runtime.js";

/**
 * The listener of `tau serve` (spec §1): a Node http server whose every path upgrades to a
 * WebSocket (no path routing, no Origin check, no subprotocol). The token is the `tau_token` query
 * parameter; a wrong one is accepted and then closed 1008. Late arrivals during shutdown get 1012.
 */
export class TauHostServer {
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly context: HostContext;
  private readonly store: SessionStore;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: ResolvedHostOptions) {
    const codec = new TauCodec();
    const connections = new Map<string, ClientConnection>();
    const broker = new ClientToolBroker({
      ackDeadlineMs: options.clientToolAckDeadlineMs,
      defaultExecutionDeadlineMs: options.clientToolExecutionDeadlineMs,
      hostToolNames: HOST_TOOL_NAMES,
      send: (connectionId, message) => {
        const connection = connections.get(connectionId);
        if (!connection) throw new Error(`connection ${connectionId} is gone`);
        connection.send(message);
      },
    });
    this.store = new SessionStore(options.stateDir, options.log);
    const deps: RuntimeDependencies = {
      broker,
      store: this.store,
      streamDelayMs: options.streamDelayMs,
      log: options.log,
      checkDelta: options.validateOutgoing ? deltaChecker(codec, options.log) : undefined,
    };
    this.context = {
      options,
      codec,
      methods: TAU_METHOD_ORDER.filter((name) => codec.validator.method(name)?.kind === "request") as MethodName[],
      sessions: new SessionRegistry(deps, codec.validator),
      broker,
      connections,
    };
    this.http = createServer((_request, response) => {
      response.writeHead(426, { "content-type": "text/plain; charset=utf-8", upgrade: "websocket" });
      response.end("This is a Tau session protocol endpoint: connect with a WebSocket.\n");
    });
    this.wss = new WebSocketServer({ server: this.http });
    this.wss.on("connection", (socket, request) => this.accept(socket, request.url ?? "/"));
    // ws re-emits every error of the http server it is attached to; listen() reports those (an
    // address in use, say), so without this listener the same error would also crash the process.
    this.wss.on("error", () => undefined);
  }

  /** Restores persisted sessions, then listens; resolves with the bound address. */
  async listen(): Promise<AddressInfo> {
    await this.context.sessions.restore();
    await new Promise<void>((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(this.options.port, this.options.host, () => {
        this.http.off("error", reject);
        resolve();
      });
    });
    return this.http.address() as AddressInfo;
  }

  /** Terminates connections, interrupts and settles all work, persists, and stops listening. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const connection of [...this.context.connections.values()]) connection.terminate();
      await this.context.sessions.shutdown();
      await this.store.flush();
      for (const socket of this.wss.clients) socket.terminate();
      await new Promise<void>((resolve) => this.wss.close(() => resolve()));
      await new Promise<void>((resolve) => {
        this.http.close(() => resolve());
        this.http.closeAllConnections();
      });
    })();
    return this.closing;
  }

  private accept(socket: WebSocket, url: string): void {
    if (this.closing) {
      socket.close(1012, "server closed");
      return;
    }
    const token = this.options.authToken;
    if (token !== undefined && new URL(url, "http://host").searchParams.get("tau_token") !== token) {
      socket.close(1008, "unauthorized");
      return;
    }
    new HostConnection(socket, this.context).start();
  }
}

/** Development mode: every delta is checked against the schema and the snapshot invariants as it is made. */
function deltaChecker(codec: TauCodec, log: LineLog): RuntimeDependencies["checkDelta"] {
  return (message, snapshot) => {
    const verdict = codec.checkServerMessage(message);
    let problem = verdict.ok ? undefined : verdict.issues.map((i) => `${i.pointer} ${i.message}`).join("; ");
    if (!problem) {
      try {
        checkSnapshotInvariants(snapshot);
      } catch (err) {
        problem = (err as Error).message;
      }
    }
    if (problem === undefined) return;
    const line = `tau host made an invalid ${message.cause.type} delta (revision ${message.toRevision}): ${problem}`;
    log(line);
    console.error(line);
    throw new OutgoingMessageError(line);
  };
}
