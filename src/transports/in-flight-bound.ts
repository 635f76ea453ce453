/**
 * How many of one peer's messages may be handed to its connection and not yet settled (answered
 * and written, or otherwise dealt with) before its input is no longer read. Far above any
 * in-flight limit a client meets in practice: requests past the limit are refused at once and
 * settle once the refusal is written, so only a flood whose answers queue up behind earlier ones
 * (answers in request order) reaches it, and that flood then waits in the peer's pipe or TCP
 * window instead of in our memory.
 */
export const MESSAGES_IN_FLIGHT_BOUND = 1024;

/** Reading goes on once this few are left in flight: a flood is taken in batches, not message by message. */
export const READ_ON_IN_FLIGHT = MESSAGES_IN_FLIGHT_BOUND / 2;
