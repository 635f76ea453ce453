import { askDialect } from "../dialects/ask.js";
import { stdioConnector } from "../infra/stdio-channels.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { stdioProperties } from "../properties/stdio-properties.js";
import { streamTarget } from "../stream-target.js";

/** Ask JSON-RPC as NDJSON on the stdin/stdout of `tau-gateway stdio` (one process, one connection). */
export default streamTarget({
  name: "stdio (NDJSON)",
  command: "stdio",
  connect: stdioConnector(),
  dialect: askDialect(),
  properties: [snapshotAmplification, ...stdioProperties],
});
