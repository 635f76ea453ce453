import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { deferred } from "./echo-tool.js";

/** A permission request the editor was sent, and the answer it gives once the test says so. */
export interface AskedPermission {
  readonly params: acp.RequestPermissionRequest;
  answer(response: acp.RequestPermissionResponse): void;
}

/**
 * An editor built with the official ACP SDK's client, connected to a gateway's `/acp` WebSocket
 * through the SDK's own WebSocket transport, held open until `close()`. The test answers each
 * permission request it is sent (`permission()`), and reads the session updates it was sent.
 */
export class AcpSdkEditor {
  readonly updates: acp.SessionNotification[] = [];
  /** Every permission request it was sent, in order (taken or not). */
  readonly asked: acp.RequestPermissionRequest[] = [];
  private readonly waiting: AskedPermission[] = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly connection: acp.ClientConnection) {
    // A waiter learns that the connection closed rather than waiting for what can no longer come.
    connection.signal.addEventListener("abort", () => this.wake());
  }

  static open(url: string, headers: Record<string, string>, name = "tau-gateway-tests"): AcpSdkEditor {
    let editor: AcpSdkEditor | undefined;
    const app = acp
      .client({ name })
      .onRequest("session/request_permission", ({ params }) => {
        const answered = deferred<acp.RequestPermissionResponse>();
        editor!.arrived({ params, answer: answered.resolve });
        return answered.promise;
      })
      .onNotification("session/update", ({ params }) => {
        editor!.updates.push(params);
        editor!.wake();
      });
    editor = new AcpSdkEditor(app.connect(createWebSocketStream(url, { WebSocket: WebSocket as never, headers })));
    return editor;
  }

  /** The agent's methods, as the SDK calls them. */
  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /** The next permission request not yet taken, as it arrives. */
  async permission(): Promise<AskedPermission> {
    await this.until(() => this.waiting.length > 0);
    return this.waiting.shift()!;
  }

  /** The first session update `match` accepts, as it arrives (updates already received count). */
  async update(match: (update: acp.SessionUpdate) => boolean): Promise<acp.SessionUpdate> {
    let found: acp.SessionUpdate | undefined;
    await this.until(() => (found = this.updates.map((n) => n.update).find(match)) !== undefined);
    return found!;
  }

  close(): Promise<void> {
    this.connection.close();
    return this.connection.closed;
  }

  private arrived(asked: AskedPermission): void {
    this.asked.push(asked.params);
    this.waiting.push(asked);
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  private async until(done: () => boolean): Promise<void> {
    while (!done()) {
      if (this.connection.signal.aborted) throw new Error("the ACP connection closed");
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}
