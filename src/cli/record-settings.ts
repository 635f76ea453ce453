import type { Log } from "../shared/log.js";
import { DEFAULT_RECORD_MAX_BYTES, DEFAULT_RECORD_MAX_FILE_BYTES, recordingFile, type FileRecording, type RecordingLimits } from "../transports/recording/recording-folder.js";
import type { RecordedDialect } from "../transports/recording/transcript-lines.js";
import { CommandExit, type CommandIO } from "./io.js";
import { envName, integer, nonEmpty, type SettingSpec } from "./settings.js";
import { systemErrorText } from "../shared/unknown-values.js";

/** The size bounds of `--record` (serve: a folder of recordings; stdio, app-server, acp: one file). */
export const recordSettings = {
  recordMaxFileBytes: { flag: "record-max-file-bytes", default: DEFAULT_RECORD_MAX_FILE_BYTES, parse: integer(1024) },
  recordMaxBytes: { flag: "record-max-bytes", default: DEFAULT_RECORD_MAX_BYTES, parse: integer(1024) },
} satisfies Record<string, SettingSpec<unknown>>;

export const recordLimits = (settings: { recordMaxFileBytes: number; recordMaxBytes: number }): RecordingLimits => ({
  maxFileBytes: settings.recordMaxFileBytes,
  maxFolderBytes: settings.recordMaxBytes,
});

export const RECORD_USAGE = `  --record DIR                  record every client connection (WebSocket /rpc, /, /acp, /tau,
                                --socket, HTTP POST /rpc and GET /rpc/events) into DIR, one JSONL
                                file per connection or event stream named by dialect and connection,
                                as tau-gateway validate reads it; no URL, header or token is written
                                (default: off) ${envName("record")} or TAU_GATEWAY_RECORD_DIR
  --record-max-file-bytes N     a recording stops growing at N bytes, cut between two lines and
                                logged (default ${DEFAULT_RECORD_MAX_FILE_BYTES}) ${envName("record-max-file-bytes")}
  --record-max-bytes N          the folder stops growing at N bytes, counting what it held before;
                                logged (default ${DEFAULT_RECORD_MAX_BYTES}) ${envName("record-max-bytes")}`;

/** `--record FILE` of the commands that serve one client on stdin/stdout. */
export const recordFileSettings = {
  record: { flag: "record", parse: nonEmpty },
  recordMaxFileBytes: recordSettings.recordMaxFileBytes,
} satisfies Record<string, SettingSpec<unknown>>;

export const RECORD_FILE_USAGE = `  --record FILE                 record every message both ways into FILE (replaced if it exists),
                                as tau-gateway validate reads it (default: off) ${envName("record")}
  --record-max-file-bytes N     the recording stops growing at N bytes, cut between two lines and
                                logged (default ${DEFAULT_RECORD_MAX_FILE_BYTES}) ${envName("record-max-file-bytes")}`;

/**
 * The recording `--record FILE` asks for (undefined without it). A file that cannot be written is
 * said on stderr and ends the command with status 2 before it serves anything.
 */
export async function openRecordingFile(
  command: string,
  settings: { record?: string; recordMaxFileBytes: number },
  dialect: RecordedDialect,
  io: CommandIO,
  log: Log,
): Promise<FileRecording | undefined> {
  if (settings.record === undefined) return undefined;
  try {
    return await recordingFile(settings.record, dialect, "stdio", settings.recordMaxFileBytes, log);
  } catch (err) {
    io.stderr(`tau-gateway ${command}: cannot record to ${settings.record}: ${systemErrorText(err)}\n`);
    throw new CommandExit(2);
  }
}

/** Ends a `--record FILE` recording (if any) once everything written to it is on disk. */
export async function closeRecordingFile(recording: FileRecording | undefined): Promise<void> {
  recording?.close();
  await recording?.finished;
}
