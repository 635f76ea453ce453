/**
 * Requests that only settle or cancel work already running on the host. An in-flight limit never
 * refuses them and does not count them: a turn's `session.submit` stays open until the turn
 * settles, and refusing the client-tool result or the interrupt that lets it settle would deadlock
 * the connection. The one definition of this set.
 */
const SETTLING_METHODS: ReadonlySet<string> = new Set([
  "session.clientTool.ack",
  "session.clientTool.result",
  "session.interrupt",
  "session.interruptSubagent",
  "session.cancelExec",
]);

export const settlesRunningWork = (method: string): boolean => SETTLING_METHODS.has(method);
