import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { startRecordingUpstream, type RecordingUpstream } from "./recording-upstream.js";

/**
 * What stands behind a fuzzed gateway: the embedded Tau host (in this process) and the recording
 * upstream in front of it, which the gateway is pointed at. Sessions work in a temporary directory
 * (commands the scripted agent or session.exec run stay inside it).
 */
export interface FuzzUpstream {
  host: RunningTauHost;
  recorder: RecordingUpstream;
  /** Working directory of the sessions fuzzing creates. */
  cwd: string;
  stop(): Promise<void>;
}

export async function startFuzzUpstream(): Promise<FuzzUpstream> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-fuzz-")));
  // The host checks its own messages too: a request the gateway forwarded that makes the host
  // misbehave shows up as a closed connection, not as silently wrong data.
  const host = await startTauHost({ port: 0, streamDelayMs: 0, validateOutgoing: true, clientToolAckDeadlineMs: 1_000, clientToolExecutionDeadlineMs: 3_000 });
  const recorder = await startRecordingUpstream(host.url);
  return {
    host,
    recorder,
    cwd,
    async stop() {
      await recorder.close();
      await host.close();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
