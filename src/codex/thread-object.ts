import type { AskForApproval, Thread, ThreadSettings, ThreadStatus } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { lastActivityMs } from "../bridge/session-activity.js";
import { sessionEphemeral } from "../bridge/session-attributes.js";
import { sandboxOf } from "./approval-policy.js";
import { preview } from "./history.js";
import { GATEWAY_THREAD_SOURCE } from "./thread-sources.js";

/** A Tau session as Codex reports its thread: the thread object, and the settings it runs with. */

/** The provider name threads report: the models are the Tau host's. */
export const MODEL_PROVIDER = "tau";

export function threadObject(snapshot: Snapshot, serverVersion: string, status: ThreadStatus, turns: Thread["turns"]): Thread {
  return {
    id: snapshot.sessionId,
    sessionId: snapshot.sessionId,
    preview: preview(snapshot),
    ephemeral: sessionEphemeral(snapshot),
    modelProvider: MODEL_PROVIDER,
    createdAt: Math.floor(snapshot.createdAt / 1000),
    updatedAt: Math.floor(lastActivityMs(snapshot) / 1000),
    status,
    cwd: snapshot.executionEnvironment.cwd,
    cliVersion: serverVersion,
    source: GATEWAY_THREAD_SOURCE,
    turns,
    projectId: null,
    model: snapshot.settings.personaId,
  };
}

/** What thread/start and thread/resume report about how the thread runs. */
export function threadRunSettings(snapshot: Snapshot, approvalPolicy: AskForApproval) {
  return {
    model: snapshot.settings.personaId,
    modelProvider: MODEL_PROVIDER,
    cwd: snapshot.executionEnvironment.cwd,
    approvalPolicy,
    approvalsReviewer: "user" as const,
    sandbox: sandboxOf(snapshot),
    reasoningEffort: snapshot.settings.reasoning ?? null,
  };
}

export type ThreadRunSettings = ReturnType<typeof threadRunSettings>;

/** The thread's settings as thread/settings/updated carries them (the same facts as threadRunSettings). */
export function threadSettingsOf(run: ThreadRunSettings, planMode: boolean): ThreadSettings {
  const { model, cwd, approvalPolicy, sandbox, reasoningEffort } = run;
  return {
    approvalPolicy,
    approvalsReviewer: "user",
    collaborationMode: { mode: planMode ? "plan" : "default", settings: { model, reasoning_effort: reasoningEffort } },
    cwd,
    model,
    modelProvider: MODEL_PROVIDER,
    sandboxPolicy: sandbox,
    effort: reasoningEffort,
  };
}
