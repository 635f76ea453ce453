import { basename } from "node:path";
import { randomUUID } from "node:crypto";
import type { ApprovalMode, WorkspaceReadStateParams, WorkspaceReadStateResult, WorkspaceSettings } from "../../../generated/ask-v1.0.js";
import type { Snapshot } from "../../../generated/tau-v18.js";
import type { MethodContext } from "../context.js";
import { modelName } from "../session-facts.js";

/**
 * The session's execution environment as Tau reports it, its git branch read inside that
 * environment with `session.exec`, and the approval mode the gateway really applies. Without a
 * session: the default workspace of the caller's tenant and the default mode. The `settings` block
 * Ask hosts keep for older clients is always there: the session's model (null without a session:
 * Tau decides a model per session) and the approval mode again.
 */
export async function readState({ services, peer }: MethodContext, params: WorkspaceReadStateParams): Promise<WorkspaceReadStateResult> {
  if (params.sessionId === undefined) {
    const path = services.workspaces.defaultFor(peer.tenant);
    return { workspace: { path, name: basename(path) || null, gitBranch: null, mode: "require" }, settings: settingsOf(undefined, "require") };
  }
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const snapshot = record.hub.snapshot!;
  const cwd = snapshot.executionEnvironment.cwd;
  const git = await services.upstream.request("session.exec", {
    sessionId: record.sessionId,
    execId: `gw-git-${randomUUID()}`,
    command: "git rev-parse --abbrev-ref HEAD 2>/dev/null",
    timeoutMs: 5000,
  });
  const branch = git.exitCode === 0 ? git.stdout.trim() : "";
  await record.interactions.refreshSettings();
  const mode = record.interactions.approvalMode;
  return {
    workspace: {
      path: cwd,
      name: basename(cwd) || null,
      gitBranch: branch && branch !== "HEAD" ? branch : null,
      mode,
      sessionId: record.sessionId,
      running: record.hub.running,
    },
    settings: settingsOf(snapshot, mode),
  };
}

function settingsOf(snapshot: Snapshot | undefined, mode: ApprovalMode): WorkspaceSettings {
  return {
    model: { current: { modelId: snapshot ? modelName(snapshot) : null, providerId: snapshot?.bootstrap.model.provider ?? null } },
    permissions: { mode },
  };
}
