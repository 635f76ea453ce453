import { TAU_SETTLING_METHODS } from "../registry/tau/index.js";

/**
 * Requests that only settle or cancel work already running on the host (`MethodEntry.settles` in
 * the registry). An in-flight limit never refuses them and does not count them: a turn's
 * `session.submit` stays open until the turn settles, and refusing the client-tool result or the
 * interrupt that lets it settle would deadlock the connection.
 */
export const settlesRunningWork = (method: string): boolean => TAU_SETTLING_METHODS.has(method);
