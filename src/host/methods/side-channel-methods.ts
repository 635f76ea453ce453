import { resolve } from "node:path";
import type { SessionCancelExecParams, SessionCancelExecResult, SessionEphemeralCloseParams, SessionEphemeralCloseResult, SessionEphemeralCreateParams, SessionEphemeralCreateResult, SessionEphemeralSubmitParams, SessionEphemeralSubmitResult, SessionExecParams, SessionExecResult, SessionSampleParams, SessionSampleResult } from "../../../generated/tau-v18.js";
import { CANCEL_CAUSES, cancelCause } from "../cancel-causes.js";
import { runExec } from "../exec-runner.js";
import type { RequestContext } from "../host-context.js";
import { AbortedError } from "../pause.js";
import { busy, cancelled } from "../protocol-error.js";
import { runScriptedSample } from "../scripted-sample.js";

/**
 * Spec §4.3 and §4.6: work outside the mutation queue and the snapshot. Execs and samples are
 * cancelled by session.interrupt, by a disconnect of the requesting connection and by shutdown.
 */
export const sideChannelMethods = {
  async "session.exec"(ctx: RequestContext, params: SessionExecParams): Promise<SessionExecResult> {
    const session = ctx.session(params.sessionId);
    // Exec ids belong to the session, whichever connection started the exec: a second exec with an
    // active id is refused (Tau's "host-level exec collision") and cancelExec reaches it from anywhere.
    if (session.execs.has(params.execId)) throw busy(`execution '${params.execId}' is already active`);
    const controller = new AbortController();
    session.execs.set(params.execId, controller);
    const releases = [session.trackSideWork(controller), ctx.connection.trackSideWork(controller)];
    let result: SessionExecResult;
    try {
      result = await runExec(
        {
          command: params.command,
          args: params.args,
          env: { ...session.env, ...params.env } as Record<string, string>,
          stdin: params.stdinBase64 === undefined ? undefined : Buffer.from(params.stdinBase64, "base64"),
          cwd: params.cwd === undefined ? session.cwd : resolve(session.cwd, params.cwd),
          timeoutMs: params.timeoutMs,
          maxCaptureBytes: params.maxCaptureBytes,
        },
        controller.signal,
      );
    } finally {
      session.execs.delete(params.execId);
      for (const release of releases) release();
    }
    if (result.aborted) throw cancelled("execution was cancelled", { cause: cancelCause(controller.signal) });
    return result;
  },

  "session.cancelExec"(ctx: RequestContext, params: SessionCancelExecParams): SessionCancelExecResult {
    const controller = ctx.session(params.sessionId).execs.get(params.execId);
    if (!controller || controller.signal.aborted) return { cancelled: false };
    controller.abort(CANCEL_CAUSES.cancelExec);
    return { cancelled: true };
  },

  async "session.sample"(ctx: RequestContext, params: SessionSampleParams): Promise<SessionSampleResult> {
    const session = ctx.session(params.sessionId);
    const controller = new AbortController();
    const releases = [session.trackSideWork(controller), ctx.connection.trackSideWork(controller)];
    try {
      return { message: await runScriptedSample(params, controller.signal) };
    } catch (err) {
      if (err instanceof AbortedError) throw cancelled("model sample was cancelled");
      throw err;
    } finally {
      for (const release of releases) release();
    }
  },

  "session.ephemeral.create"(ctx: RequestContext, params: SessionEphemeralCreateParams): SessionEphemeralCreateResult {
    const session = ctx.session(params.sessionId);
    return { contextId: session.ephemeral.create(params, session.snapshot.settings.reasoning ?? "medium") };
  },

  "session.ephemeral.submit"(ctx: RequestContext, params: SessionEphemeralSubmitParams): Promise<SessionEphemeralSubmitResult> {
    return ctx.session(params.sessionId).ephemeral.submit(params);
  },

  "session.ephemeral.close"(ctx: RequestContext, params: SessionEphemeralCloseParams): SessionEphemeralCloseResult {
    return { closed: ctx.session(params.sessionId).ephemeral.close(params.contextId) };
  },
};
