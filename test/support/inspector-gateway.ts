import { buildGateway } from "../../src/gateway/app.js";
import type { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { InspectorHub } from "../../src/gateway/inspector/inspector-hub.js";
import { listenOnEmbeddedStack, type EmbeddedStackGateway } from "./gateway.js";

/**
 * A gateway as `tau-gateway serve --inspector` puts it together (embedded host, bridge stack,
 * Ask `/rpc`, Codex `/`, ACP `/acp`, the inspector at `/inspector`), on a free loopback port.
 */
export interface InspectorGateway extends EmbeddedStackGateway {
  hub: InspectorHub;
  wsUrl(path: string): string;
}

export async function startInspectorGateway(options: { tokens?: TokenRegistry; inspector?: boolean; hosts?: string[] } = {}): Promise<InspectorGateway> {
  const hub = new InspectorHub();
  const gateway = await listenOnEmbeddedStack({ cwdPrefix: "inspector-gateway-", eventRetention: 1000 }, (stack) =>
    buildGateway({
      tauUpstream: { url: stack.url! },
      upstream: stack.upstream!,
      ask: { bridge: stack.bridge!, jsonrpc: { jsonrpcMember: "include" } },
      codex: { bridge: stack.codex! },
      acp: { agent: stack.acp! },
      tokens: options.tokens,
      inspector: options.inspector === false ? undefined : { hub, listenHost: "127.0.0.1", hosts: options.hosts },
    }),
  );
  return { ...gateway, hub, wsUrl: (path) => `${gateway.baseUrl.replace("http://", "ws://")}${path}` };
}
