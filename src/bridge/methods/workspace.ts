import { basename } from "node:path";
import type { WorkspaceReadStateParams, WorkspaceReadStateResult } from "../../../generated/ask-v1.0.js";
import { randomUUID } from "node:crypto";
import type { MethodContext } from "../context.js";

/**
 * The session's execution environment as Tau reports it, its git branch read inside that
 * environment with `session.exec`, and the approval mode the gateway really applies. Without a
 * session: the default workspace and the default mode.
 */
export async function readState({ services, peer }: MethodContext, params: WorkspaceReadStateParams): Promise<WorkspaceReadStateResult> {
  if (params.sessionId === undefined) {
    return { workspace: { path: services.defaultCwd, name: basename(services.defaultCwd) || null, gitBranch: null, mode: "require" } };
  }
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const cwd = record.hub.snapshot!.executionEnvironment.cwd;
  const git = await services.upstream.request("session.exec", {
    sessionId: record.sessionId,
    execId: `gw-git-${randomUUID()}`,
    command: "git rev-parse --abbrev-ref HEAD 2>/dev/null",
    timeoutMs: 5000,
  });
  const branch = git.exitCode === 0 ? git.stdout.trim() : "";
  return {
    workspace: {
      path: cwd,
      name: basename(cwd) || null,
      gitBranch: branch && branch !== "HEAD" ? branch : null,
      mode: record.interactions.approvalMode,
      sessionId: record.sessionId,
      running: record.hub.running,
    },
  };
}
