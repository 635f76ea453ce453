import type WebSocket from "ws";
import type { Log } from "../shared/log.js";
import { isObject } from "../shared/unknown-values.js";
import type { RelayDialect } from "./relay-dialect.js";
import { sendResumes } from "./resume-requests.js";
import type { StreamResume } from "./stream-resume.js";

type Message = Record<string, unknown>;

/** What a relay repeats on a new link before anything of the client's goes on it. */
export interface RelayHandshake {
  dialect: RelayDialect;
  resume: StreamResume | undefined;
  log: Log;
  /** The client's handshake request's params, once it was answered; undefined: the client made none yet. */
  params: unknown;
  /** The notifications that completed it (Codex `initialized`), by method. */
  notifications: ReadonlyMap<string, unknown>;
  /** Sends a request of the relay's own on the link; resolves with the gateway's answer (kept from the client). */
  request(method: string, params: unknown): Promise<Message>;
  /** Sends a message on the link. */
  send(message: Message): void;
  /** Writes a message of the relay's to the client. */
  tell(message: Message): void;
  /** Whether `socket` is still the relay's link. */
  current(socket: WebSocket): boolean;
  /** Lets the link go unannounced (the next attempt repeats everything). */
  letGo(socket: WebSocket): void;
}

/**
 * Repeats the client's handshake and the dialect's resumes on a new link, their answers kept from
 * the client. Resolves false when the link was lost meanwhile, or let go because the gateway
 * cannot serve the streams yet (the reconnect loop tries again).
 */
export async function repeatHandshake(socket: WebSocket, h: RelayHandshake): Promise<boolean> {
  const { dialect, resume, log } = h;
  if (h.params !== undefined) {
    // As the client's went, through the dialect's resume (ACP's asks for the places of updates).
    const handshake = { id: 0, method: dialect.handshakeRequest, params: h.params };
    const answer = await h.request(handshake.method, (resume?.toGateway?.(handshake) ?? handshake).params);
    if (!h.current(socket)) return false;
    if ("error" in answer) log("error", "the gateway refused the client's handshake on the new connection", { error: answer.error });
    for (const [method, params] of h.notifications) h.send({ method, ...(params === undefined ? {} : { params }) });
  }
  const looked = (await resume?.prepare?.((method, params) => h.request(method, params), h.tell)) ?? [];
  if (!h.current(socket)) return false;
  const overloaded = (answer: Message) => isObject(answer.error) && answer.error.code === dialect.overloadedCode;
  const resumes = await sendResumes(resume?.replays() ?? [], ({ method, params }) => h.request(method, params), overloaded);
  if (!h.current(socket)) return false;
  const unavailable = (answer: Message) => isObject(answer.error) && answer.error.code === dialect.unavailableCode;
  if (looked.some(unavailable) || resumes.some(({ answer }) => unavailable(answer))) {
    // The gateway is up but cannot serve the sessions yet (its Tau host is still being taken
    // over): this link is let go unannounced and the next attempt repeats everything.
    log("info", "the gateway cannot resume the streams yet; trying again", { error: [...looked, ...resumes.map(({ answer }) => answer)].find(unavailable)?.error });
    h.letGo(socket);
    return false;
  }
  for (const { method, params, answer } of resumes) {
    if (!("error" in answer)) continue;
    log("warn", `resuming with ${method} failed`, { params, error: answer.error });
    resume?.refused?.(params);
  }
  return true;
}
