import { firstAnswer, type ReverseRequester } from "./interactions/index.js";

/**
 * The ways interactions reach clients directly, one per dialect that answers reverse requests:
 * each is asked, and the first answer wins. An interaction waits for an answer from any client,
 * whatever dialect it speaks; nobody being able to answer is `undefined`, as from one requester.
 */
export class ReverseRequesterSet implements ReverseRequester {
  private readonly members = new Set<ReverseRequester>();

  /** Adds a requester; returns the function that removes it. */
  add(requester: ReverseRequester): () => void {
    this.members.add(requester);
    return () => this.members.delete(requester);
  }

  requestPermission(...args: Parameters<ReverseRequester["requestPermission"]>) {
    return firstAnswer([...this.members].map((m) => m.requestPermission(...args).catch(() => undefined)));
  }

  requestUserInput(...args: Parameters<ReverseRequester["requestUserInput"]>) {
    return firstAnswer([...this.members].map((m) => m.requestUserInput(...args).catch(() => undefined)));
  }
}
