import type { NotificationEntry } from "../model.js";
import { obj, opt, ref } from "../schema.js";

/** Server → client notifications (seed 002 NOTIFICATIONS). */
export const askNotificationEntries: NotificationEntry[] = [
  {
    kind: "notification",
    sender: "server",
    name: "session/event",
    description: "Delivers one session event envelope {type, seq, payload} to a subscribed connection.",
    // The canonical params name no session, so a connection subscribed to several sessions could
    // not tell them apart; hosts that omit it stay valid.
    params: obj(
      { event: ref("Event"), sessionId: opt(ref("SessionId")) },
      { description: "sessionId (gateway extension): the session the event belongs to." },
    ),
  },
];
