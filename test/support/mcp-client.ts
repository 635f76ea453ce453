import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { inject } from "vitest";
import WebSocket from "ws";
import { serverMessageProblems } from "./mcp-official-schema.js";

/**
 * The official MCP SDK client in tests, on a transport that keeps every message both ways, so a
 * test can check all the server sent against the official schema (mcp-official-schema.ts).
 */
export class RecordingTransport implements Transport {
  readonly fromServer: JSONRPCMessage[] = [];
  readonly fromClient: JSONRPCMessage[] = [];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];

  constructor(readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      this.fromServer.push(message);
      this.onmessage?.(message, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]): Promise<void> {
    this.fromClient.push(message);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** What the server sent that the official schema refuses. */
  problems(): string[] {
    return serverMessageProblems(this.fromServer, this.fromClient);
  }
}

/** `tau-gateway mcp ARGS` as an MCP host spawns it (the test run's bundle), with its own HOME. */
export function stdioTransport(args: string[], env: Record<string, string> = {}): RecordingTransport {
  const bundle = inject("cliBundle");
  return new RecordingTransport(
    new StdioClientTransport({
      command: process.execPath,
      args: [bundle, "mcp", ...args],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stderr: "pipe",
    }),
  );
}

/** An SDK client; `elicitation`: it declares form elicitation (its handler set by the test). */
/**
 * An SDK client that lists its tools again each time it is told they changed (the SDK's
 * `listChanged.tools` handler, without its 300 ms debounce: one list per change), keeping each list
 * it read in `relisted`.
 */
export function relistingClient(name = "tau-gateway-tests"): { client: Client; relisted: string[][] } {
  const relisted: string[][] = [];
  const client = new Client(
    { name, version: "1.0.0" },
    {
      capabilities: {},
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (error) throw error;
            relisted.push((tools ?? []).map((tool) => tool.name));
          },
        },
      },
    },
  );
  return { client, relisted };
}

/** How many times the server told the client its tools changed. */
export const toolListChanges = (transport: RecordingTransport): number =>
  transport.fromServer.filter((m) => "method" in m && m.method === "notifications/tools/list_changed").length;

export function sdkClient(options: { elicitation?: boolean } = {}): Client {
  return new Client({ name: "tau-gateway-tests", version: "1.0.0" }, { capabilities: options.elicitation ? { elicitation: { form: {} } } : {} });
}

/**
 * The SDK's WebSocket transport on `url` (the gateway's `/mcp/ws`). It uses the global WebSocket,
 * which this Node has not: the ws package's stands in, as the browser's would.
 */
export function webSocketTransport(url: string): RecordingTransport {
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  return new RecordingTransport(new WebSocketClientTransport(new URL(url)));
}

/**
 * The SDK's Streamable HTTP transport on `url` (the gateway's `/mcp`), reconnecting a dropped
 * stream at once (its default waits a second first) and giving up after two tries.
 */
export function httpTransport(url: string, options: Omit<StreamableHTTPClientTransportOptions, "reconnectionOptions"> = {}): RecordingTransport & { inner: StreamableHTTPClientTransport } {
  const inner = new StreamableHTTPClientTransport(new URL(url), {
    ...options,
    reconnectionOptions: { initialReconnectionDelay: 1, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
  return new RecordingTransport(inner) as RecordingTransport & { inner: StreamableHTTPClientTransport };
}
