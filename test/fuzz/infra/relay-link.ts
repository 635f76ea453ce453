import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { AskTestClient } from "../../support/ask-client.js";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.js";
import { snapshotOnHost, userTexts } from "../../support/tau-client.js";
import { GatewayProcess } from "./gateway-process.js";
import { startRecordingUpstream, type RecordingUpstream } from "./recording-upstream.js";
import { StdioChannel } from "./stdio-channel.js";

/**
 * What the relay fuzz target drives: `tau-gateway serve` on a Tau host of its own that streams
 * slowly (so faults land mid-reply), behind the recording upstream; a loopback TCP proxy in front
 * of the gateway, whose connections the cases cut; and `tau-gateway stdio --remote` through the
 * proxy, with an Ask client on its stdin/stdout. Observers on the gateway's own port (not through
 * the proxy) see what the sessions really did.
 */
export interface RelayLink {
  host: RunningTauHost;
  recorder: RecordingUpstream;
  gateway: GatewayProcess;
  proxy: TcpProxy;
  /** The process under test: `stdio --remote ws://PROXY`. */
  relay: GatewayProcess;
  /** The Ask client on the relay's stdio (one for the whole run; its ids count up). */
  client: AskTestClient;
  /** An Ask client on the gateway's own /rpc, subscribed to `sessionId` from its start. */
  observe(sessionId: string): Promise<AskTestClient & { close(): void }>;
  /** The text of each user message of the session, as the Tau host has them. */
  userMessages(sessionId: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** Milliseconds between streamed deltas of the link's host: a reply of a few dozen deltas lasts long enough to be cut. */
const STREAM_DELAY_MS = 4;

export async function startRelayLink(cwd: string): Promise<RelayLink> {
  const host = await startTauHost({ port: 0, streamDelayMs: STREAM_DELAY_MS, validateOutgoing: true });
  const recorder = await startRecordingUpstream(host.url);
  const stops: Array<() => Promise<unknown>> = [() => host.close(), () => recorder.close()];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const { process: gateway, baseUrl } = await GatewayProcess.start("serve", ["--upstream", recorder.url, "--default-cwd", cwd, "--port", "0", "--log-level", "warn"]);
    stops.push(() => gateway.stop());
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(baseUrl!).port) });
    stops.push(() => proxy.close());
    const { process: relay } = await GatewayProcess.start("stdio", ["--remote", `ws://127.0.0.1:${proxy.port}`, "--log-level", "warn"]);
    stops.push(() => relay.stop());
    const channel = new StdioChannel(relay.child);
    const client = new AskTestClient((line) => channel.sendText(line));
    channel.onMessage((text) => client.receive(text));
    const rpc = `${baseUrl!.replace("http://", "ws://")}/rpc`;
    return {
      host,
      recorder,
      gateway,
      proxy,
      relay,
      client,
      async observe(sessionId) {
        const observer = await AskTestClient.websocket(rpc);
        await observer.request("initialize", { client: { name: "fuzz-observer", version: "1" } });
        await observer.request("session/subscribe", { sessionId, afterSeq: 0 });
        return Object.assign(observer, { close: () => observer.socket.terminate() });
      },
      userMessages: async (sessionId) => userTexts(await snapshotOnHost(host.url, sessionId)),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
