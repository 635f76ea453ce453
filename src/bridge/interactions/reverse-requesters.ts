import { firstAnswer } from "./first-answer.js";
import type { ReverseRequester } from "./reverse-requester.js";

/**
 * The ways every dialect served by the gateway asks its connected clients, as one: each dialect
 * adds its requester, and an interaction asks them all; the first answer decides (the others are
 * stopped through the interaction's signal once it is settled). Nobody able to answer anywhere
 * leaves the decision to the interaction methods or the deadline.
 */
export class ReverseRequesters implements ReverseRequester {
  private readonly requesters: ReverseRequester[] = [];

  add(requester: ReverseRequester): void {
    this.requesters.push(requester);
  }

  requestPermission(...args: Parameters<ReverseRequester["requestPermission"]>) {
    return firstAnswer(this.requesters.map((r) => r.requestPermission(...args).catch(() => undefined)));
  }

  requestUserInput(...args: Parameters<ReverseRequester["requestUserInput"]>) {
    return firstAnswer(this.requesters.map((r) => r.requestUserInput(...args).catch(() => undefined)));
  }
}
