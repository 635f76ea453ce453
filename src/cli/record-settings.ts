import { DEFAULT_RECORD_MAX_BYTES, DEFAULT_RECORD_MAX_FILE_BYTES, type RecordingLimits } from "../transports/recording/recording-folder.js";
import { envName, integer, type SettingSpec } from "./settings.js";

/** The size bounds of `--record` (serve: a folder of recordings; stdio, app-server, acp: one file). */
export const recordSettings = {
  recordMaxFileBytes: { flag: "record-max-file-bytes", default: DEFAULT_RECORD_MAX_FILE_BYTES, parse: integer(1024) },
  recordMaxBytes: { flag: "record-max-bytes", default: DEFAULT_RECORD_MAX_BYTES, parse: integer(1024) },
} satisfies Record<string, SettingSpec<unknown>>;

export const recordLimits = (settings: { recordMaxFileBytes: number; recordMaxBytes: number }): RecordingLimits => ({
  maxFileBytes: settings.recordMaxFileBytes,
  maxFolderBytes: settings.recordMaxBytes,
});

export const RECORD_USAGE = `  --record DIR                  record every client WebSocket connection (/rpc, /, /acp, /tau) into
                                DIR, one JSONL file per connection named by dialect and connection,
                                as tau-gateway validate reads it; no URL, header or token is written
                                (default: off) ${envName("record")} or TAU_GATEWAY_RECORD_DIR
  --record-max-file-bytes N     a recording stops growing at N bytes, cut between two lines and
                                logged (default ${DEFAULT_RECORD_MAX_FILE_BYTES}) ${envName("record-max-file-bytes")}
  --record-max-bytes N          the folder stops growing at N bytes, counting what it held before;
                                logged (default ${DEFAULT_RECORD_MAX_BYTES}) ${envName("record-max-bytes")}`;
