import { codexDialect } from "../dialects/codex.js";
import { stdioConnector } from "../infra/stdio-channels.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { streamTarget } from "../stream-target.js";

/** The Codex app-server dialect (v2) as NDJSON on the stdin/stdout of `tau-gateway app-server`. */
export default streamTarget({
  name: "app-server (NDJSON)",
  command: "app-server",
  connect: stdioConnector(),
  dialect: codexDialect(),
  properties: [snapshotAmplification],
});
