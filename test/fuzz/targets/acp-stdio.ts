import { acpDialect } from "../dialects/acp.js";
import { stdioConnector } from "../infra/stdio-channels.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { streamTarget } from "../stream-target.js";

/** The Agent Client Protocol (v1) as NDJSON on the stdin/stdout of `tau-gateway acp`. */
export default streamTarget({
  name: "acp (NDJSON)",
  command: "acp",
  defaultCwd: false,
  connect: stdioConnector(),
  dialect: acpDialect(),
  properties: [snapshotAmplification],
});
