import { randomUUID } from "node:crypto";
import { REQUEST_KEY } from "../../../bridge/request-recall.js";
import { AT_FIELD, RELAY_CAPABILITY, RESUME_AFTER, type LogPosition } from "../../../codex/relay-positions.js";
import { isObject } from "../../../shared/unknown-values.js";
import { isRequestId } from "../../../relay/requests.js";
import { SessionReattach } from "../../../relay/session-reattach.js";
import { before, positionIn, type StreamResume } from "../../../relay/stream-resume.js";

type Message = Record<string, unknown>;

/**
 * Codex threads over a relay's new link, resumed where the client was (src/codex/relay-positions.ts
 * says what the gateway does of it): the relay's connection asks, in its `initialize`, for each
 * thread notification's place in the session's log; the relay keeps the last one it passed on per
 * thread (and takes the field off), and resumes each thread the client opened with `thread/resume`
 * after that place, so the new link sends again what the client missed, once. Each turn/start
 * goes with an idempotency key of the relay's, so that one the lost link did not answer can be
 * sent again (RelayDialect.rejoins) without starting a second turn.
 */
export class CodexThreadResume implements StreamResume {
  private readonly threads = codexThreadReattach();
  /** The place in its log of the last notification passed on, per thread. */
  private readonly at = new Map<string, LogPosition>();

  answered(method: string, params: unknown, result: unknown): void {
    this.threads.answered(method, params, result);
    // Where the thread was as the connection loaded it: a cut before any of its notifications came resumes from there.
    if ((method !== "thread/start" && method !== "thread/resume") || !isObject(result) || !isObject(result.thread)) return;
    const at = positionIn(result[AT_FIELD]);
    const threadId = result.thread.id;
    if (at && typeof threadId === "string" && !before(at, this.at.get(threadId))) this.at.set(threadId, at);
  }

  forwarded(_method: string, params: unknown): void {
    if (!isObject(params) || typeof params.threadId !== "string") return;
    const at = positionIn(params[AT_FIELD]);
    if (at) this.at.set(params.threadId, at);
  }

  toGateway(message: Message): Message | undefined {
    if (!isRequestId(message.id)) return undefined;
    // A turn/start may be sent again on a new link: with a key, so that the repeat does not run it twice.
    if (message.method === "turn/start" && isObject(message.params)) return { ...message, params: { ...message.params, [REQUEST_KEY]: randomUUID() } };
    if (message.method !== "initialize") return undefined;
    const params = isObject(message.params) ? message.params : {};
    const capabilities = isObject(params.capabilities) ? params.capabilities : {};
    return { ...message, params: { ...params, capabilities: { ...capabilities, [RELAY_CAPABILITY]: true } } };
  }

  toClient(message: Message, answering?: string): Message | undefined {
    if ((answering === "thread/start" || answering === "thread/resume") && isObject(message.result) && AT_FIELD in message.result) {
      const { [AT_FIELD]: _at, ...result } = message.result;
      return { ...message, result };
    }
    if (typeof message.method !== "string" || !isObject(message.params) || !(AT_FIELD in message.params)) return undefined;
    // The field is the relay's business: the client gets the notification as a direct connection would.
    const { [AT_FIELD]: _at, ...params } = message.params;
    return { ...message, params };
  }

  replays(): Array<{ method: string; params: Record<string, unknown> }> {
    return this.threads.replays().map(({ method, params }) => {
      const at = this.at.get(params.threadId as string);
      return { method, params: at ? { ...params, [RESUME_AFTER]: at } : params };
    });
  }

  refused(params: Record<string, unknown>): void {
    if (typeof params.threadId === "string") this.threads.refusedSession(params.threadId);
  }
}

const text = (value: unknown) => (typeof value === "string" ? value : undefined);

/** Codex: every thread started or resumed on the connection is resumed again, without its turns. */
export const codexThreadReattach = () =>
  new SessionReattach({
    reopenMethod: "thread/resume",
    opened: (method, _params, result) => {
      if (method !== "thread/start" && method !== "thread/resume") return undefined;
      const threadId = isObject(result.thread) ? text(result.thread.id) : undefined;
      return threadId === undefined ? undefined : { id: threadId, reopen: { threadId, excludeTurns: true } };
    },
    closed: () => undefined,
  });
