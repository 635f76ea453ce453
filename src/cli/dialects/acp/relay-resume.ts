import { randomUUID } from "node:crypto";
import { AFTER_META, AT_META, OWN_PROMPTS_META, RELAY_META, TURN_META, type LogPosition } from "../../../acp/relay-positions.js";
import { isObject } from "../../../shared/unknown-values.js";
import { isRequestId, keyOf } from "../../../relay/requests.js";
import { SessionReattach } from "../../../relay/session-reattach.js";
import { before, positionIn, type StreamResume } from "../../../relay/stream-resume.js";

type Message = Record<string, unknown>;

/** The requests that take a session up on the connection, whose answers say where in its log. */
const TAKES_UP = new Set(["session/new", "session/load", "session/resume"]);

/**
 * ACP's sessions over a relay's new link, resumed where the editor was (src/acp/relay-positions.ts
 * says what the gateway does of it): the relay's connection asks, in its `initialize`, for each
 * session update's place in the session's log; the relay keeps the last one it passed on per
 * session (and takes the tag off), and resumes each session the editor has open with
 * `session/resume` after that place, so the new link sends what the editor missed, once.
 *
 * Each of the editor's prompts goes with a turn id of the relay's: a prompt the lost link did not
 * answer is sent again with it on the new link (RelayDialect.rejoins) and rejoins its turn rather
 * than running again; until it is answered its turn's user message is the editor's own.
 */
export class AcpSessionResume implements StreamResume {
  private readonly sessions = acpSessionReattach();
  /** The place in its log of the last update passed on, per session. */
  private readonly at = new Map<string, LogPosition>();
  /** The editor's prompts not answered yet, by their request id (its key). */
  private readonly prompts = new Map<string, { sessionId: string; turnId: string }>();

  answered(method: string, params: unknown, result: unknown): void {
    this.sessions.answered(method, params, result);
    // Where the session was as the connection took it up: a cut before any of its updates came resumes from there.
    if (!TAKES_UP.has(method) || !isObject(result) || !isObject(result._meta)) return;
    const at = positionIn(result._meta[AT_META]);
    const sessionId = method === "session/new" ? result.sessionId : isObject(params) ? params.sessionId : undefined;
    if (at && typeof sessionId === "string" && !before(at, this.at.get(sessionId))) this.at.set(sessionId, at);
  }

  forwarded(method: string, params: unknown): void {
    if (method !== "session/update" || !isObject(params) || typeof params.sessionId !== "string" || !isObject(params._meta)) return;
    const at = positionIn(params._meta[AT_META]);
    if (at) this.at.set(params.sessionId, at);
  }

  toGateway(message: Message): Message | undefined {
    if (!isRequestId(message.id)) return undefined;
    if (message.method === "initialize") return withMeta(message, { [RELAY_META]: true });
    if (message.method !== "session/prompt" || !isObject(message.params) || typeof message.params.sessionId !== "string") return undefined;
    const turnId = randomUUID();
    this.prompts.set(keyOf(message.id), { sessionId: message.params.sessionId, turnId });
    return withMeta(message, { [TURN_META]: turnId });
  }

  toClient(message: Message, answering?: string): Message | undefined {
    if (answering === "session/prompt" && isRequestId(message.id)) this.prompts.delete(keyOf(message.id));
    if (answering && TAKES_UP.has(answering) && isObject(message.result) && isObject(message.result._meta) && AT_META in message.result._meta) {
      const { [AT_META]: _at, ...meta } = message.result._meta;
      const { _meta: _tagged, ...result } = message.result;
      return { ...message, result: Object.keys(meta).length > 0 ? { ...result, _meta: meta } : result };
    }
    if (message.method !== "session/update" || !isObject(message.params) || !isObject(message.params._meta) || !(AT_META in message.params._meta)) return undefined;
    // The tag is the relay's business: the editor gets the update as a direct connection would.
    const { [AT_META]: _at, ...meta } = message.params._meta;
    const { _meta: _tagged, ...params } = message.params;
    return { ...message, params: Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params };
  }

  replays(): Array<{ method: string; params: Record<string, unknown> }> {
    return this.sessions.replays().map(({ method, params }) => {
      const sessionId = params.sessionId as string;
      const at = this.at.get(sessionId);
      const own = [...this.prompts.values()].filter((p) => p.sessionId === sessionId).map((p) => p.turnId);
      const meta = { ...(at ? { [AFTER_META]: at } : {}), ...(own.length > 0 ? { [OWN_PROMPTS_META]: own } : {}) };
      return { method, params: Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params };
    });
  }

  refused(params: Record<string, unknown>): void {
    if (typeof params.sessionId === "string") this.sessions.refusedSession(params.sessionId);
  }
}

function withMeta(message: Message, meta: Record<string, unknown>): Message {
  const params = isObject(message.params) ? message.params : {};
  return { ...message, params: { ...params, _meta: { ...(isObject(params._meta) ? params._meta : {}), ...meta } } };
}

const text = (value: unknown) => (typeof value === "string" ? value : undefined);

/** ACP: every session made, loaded or resumed on the connection is resumed again (session/resume replays nothing); session/close ends it. */
export const acpSessionReattach = () =>
  new SessionReattach({
    reopenMethod: "session/resume",
    opened: (method, params, result) => {
      const sessionId = method === "session/new" ? text(result.sessionId) : method === "session/load" || method === "session/resume" ? text(params.sessionId) : undefined;
      if (sessionId === undefined) return undefined;
      return { id: sessionId, reopen: { sessionId, cwd: params.cwd, ...(params.additionalDirectories === undefined ? {} : { additionalDirectories: params.additionalDirectories }) } };
    },
    closed: (method, params) => (method === "session/close" ? text(params.sessionId) : undefined),
  });
