import type { GatewayProcess } from "./gateway-process.js";
import { StdioChannel } from "./stdio-channel.js";

/**
 * The one connection of a stdio command (its stdin/stdout): every connect() to the same process
 * gets the same channel.
 */
export function stdioConnector(): (gateway: GatewayProcess) => Promise<StdioChannel> {
  const channels = new WeakMap<GatewayProcess, StdioChannel>();
  return async (gateway) => {
    let channel = channels.get(gateway);
    if (!channel) channels.set(gateway, (channel = new StdioChannel(gateway.child)));
    return channel;
  };
}
