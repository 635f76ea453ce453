import type { MethodKind } from "./surface.js";

/**
 * Whose side `schema diff` takes. The client's (the default) asks what in NEW breaks a client
 * written against OLD; the server's asks what a server written against OLD must now honour and
 * what it may now emit. Both read the same differences; they differ in who writes each value.
 */
export type View = "client" | "server";

/** Which way a value travels: from the client to the server (requests' and notifications' params, answers to server requests), or back. */
export type Flow = "sent" | "received";

/**
 * Who the viewer is for a value: its writer (what it writes must still be accepted by NEW) or its
 * reader (it must understand everything NEW allows).
 */
export type Role = "writer" | "reader";

export const roleOf = (flow: Flow, view: View): Role => ((flow === "sent") === (view === "client") ? "writer" : "reader");

/**
 * What a difference means for the viewer, before it is named for a view: it breaks what the
 * viewer does today; the writer may now write more; the reader may now be given more.
 */
export type Impact = "breaks" | "writer-gains" | "reader-gains";

export type Severity = "breaking" | "additive" | "must-honour" | "may-emit" | "obsolete";

/** The severities of each view, in the order the totals name them. */
export const SEVERITIES: Record<View, Severity[]> = {
  client: ["breaking", "additive"],
  server: ["breaking", "must-honour", "may-emit", "obsolete"],
};

/** For a client, all that is new is additive. A server must honour what it is newly sent, and may emit what clients now accept. */
export function severityOf(impact: Impact, view: View): Severity {
  if (impact === "breaks") return "breaking";
  if (view === "client") return "additive";
  return impact === "reader-gains" ? "must-honour" : "may-emit";
}

const fromClient = (kind: MethodKind) => kind === "request" || kind === "notification";

/**
 * A method added or removed. For a client a removed one breaks it and a new one is additive. For a
 * server a new request or notification from clients must be honoured and a removed one is
 * obsolete (no longer sent); a server notification or request clients no longer know breaks it,
 * and a new one it may send.
 */
export function methodSeverity(kind: MethodKind, change: "added" | "removed", view: View): Severity {
  if (view === "client") return change === "removed" ? "breaking" : "additive";
  if (fromClient(kind)) return change === "added" ? "must-honour" : "obsolete";
  return change === "added" ? "may-emit" : "breaking";
}

/** Whether a change fails the run (exit status 1): it breaks, or a server must act on it. */
export const fails = (severity: Severity) => severity === "breaking" || severity === "must-honour";

/** The stronger of two impacts, for a change that sums up several. */
export function strongest(impacts: Impact[]): Impact | undefined {
  return (["breaks", "reader-gains", "writer-gains"] as const).find((i) => impacts.includes(i));
}
