import { askDialect } from "../dialects/ask.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { stdioProperties } from "../properties/stdio-properties.js";
import type { GatewayProcess } from "../infra/gateway-process.js";
import { StdioChannel } from "../infra/stdio-channel.js";
import { streamTarget } from "../stream-target.js";

/** Ask JSON-RPC as NDJSON on the stdin/stdout of `tau-gateway stdio` (one process, one connection). */
const channels = new WeakMap<GatewayProcess, StdioChannel>();

export default streamTarget({
  name: "stdio (NDJSON)",
  command: "stdio",
  connect: async (gateway) => {
    let channel = channels.get(gateway);
    if (!channel) channels.set(gateway, (channel = new StdioChannel(gateway.child)));
    return channel;
  },
  dialect: askDialect(),
  properties: [snapshotAmplification, ...stdioProperties],
});
