import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { tauGateway, type GatewayProcess } from "./gateway-servers.js";

/**
 * An editor as Zed is one: the official ACP SDK's client on the stdio of `tau-gateway acp
 * --remote URL`, which relays it to a running gateway's `/acp`. Every line both ways is kept
 * (to check what the gateway said in ACP's own words, e.g. `$/cancel_request`); the session updates
 * it is sent are collected; a permission request is held open until the test answers it or the
 * gateway withdraws it (the SDK aborts the request's signal on `$/cancel_request`).
 */

export interface PermissionAsked {
  requestId: acp.JsonRpcId;
  params: acp.RequestPermissionRequest;
  /** Settles the request with the option of this kind. */
  choose(kind: "allow_once" | "reject_once"): void;
  /** Resolves once the gateway withdrew the request. */
  withdrawn: Promise<void>;
  isWithdrawn(): boolean;
}

export class RelayedEditor {
  /** Every message the relay wrote (from the gateway), parsed. */
  readonly fromAgent: any[] = [];
  /** Every message the SDK wrote to the relay, parsed. */
  readonly toAgent: any[] = [];
  readonly updates: Array<{ sessionId: string; update: any }> = [];
  readonly permissions: PermissionAsked[] = [];
  readonly agent: acp.ClientContext;
  private readonly connection: acp.ClientConnection;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly relay: GatewayProcess) {
    const fromRelay = new PassThrough();
    const toRelay = new PassThrough();
    tapLines(relay.child.stdout!, this.fromAgent, () => this.wake());
    relay.child.stdout!.pipe(fromRelay);
    tapLines(toRelay, this.toAgent, () => undefined);
    toRelay.pipe(relay.child.stdin!);
    this.connection = acp
      .client({ name: "interop-editor" })
      .onNotification(acp.methods.client.session.update, async ({ params }) => {
        this.updates.push({ sessionId: params.sessionId, update: params.update });
        this.wake();
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, requestId, signal }) => {
        return new Promise((resolve) => {
          let withdrawn = false;
          let markWithdrawn!: () => void;
          const asked: PermissionAsked = {
            requestId,
            params,
            choose: (kind) => {
              const option = params.options.find((o) => o.kind === kind)!;
              resolve({ outcome: { outcome: "selected", optionId: option.optionId } });
            },
            withdrawn: new Promise<void>((r) => (markWithdrawn = r)),
            isWithdrawn: () => withdrawn,
          };
          signal.addEventListener("abort", () => {
            withdrawn = true;
            markWithdrawn();
            this.wake();
            resolve({ outcome: { outcome: "cancelled" } });
          });
          this.permissions.push(asked);
          this.wake();
        });
      })
      .connect(acp.ndJsonStream(Writable.toWeb(toRelay) as WritableStream<Uint8Array>, Readable.toWeb(fromRelay) as ReadableStream<Uint8Array>));
    this.agent = this.connection.agent;
  }

  /** Spawns the relay to the gateway at `url` (its token in the environment, as an editor's settings put it) and initializes. */
  static async connect(url: string, token: string): Promise<RelayedEditor> {
    const relay = tauGateway(["acp", "--remote", url], { TAU_GATEWAY_REMOTE_TOKEN: token });
    const editor = new RelayedEditor(relay);
    await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    return editor;
  }

  /** The text of the agent_message_chunk updates of `sessionId` received so far. */
  agentText(sessionId: string): string {
    return this.updates
      .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk" && u.update.content?.type === "text")
      .map((u) => u.update.content.text)
      .join("");
  }

  /** Resolves once `holds()`; fails after `timeoutMs` with what the relay wrote. */
  waitFor(holds: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    if (holds()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!holds()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`the editor timed out waiting for ${what}; the relay wrote: ${JSON.stringify(this.fromAgent.slice(-20)).slice(0, 3000)}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** The editor goes away at once (its relay killed): its connection to the gateway drops. */
  async drop(): Promise<void> {
    await this.relay.kill();
    this.connection.close();
  }

  /** The editor lets go of the agent as editors do: stdin ends, and the relay exits once it drained. */
  async close(): Promise<void> {
    this.connection.close();
    this.relay.child.stdin!.end();
    await new Promise<void>((resolve) => (this.relay.child.exitCode !== null ? resolve() : this.relay.child.once("exit", () => resolve())));
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}

/** Parses each line of `stream` into `into`, calling `then` after each. */
function tapLines(stream: NodeJS.ReadableStream, into: any[], then: () => void): void {
  let partial = "";
  stream.on("data", (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) into.push(JSON.parse(line));
    then();
  });
}
