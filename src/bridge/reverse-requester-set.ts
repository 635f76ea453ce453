import type { ReverseRequester } from "./interactions/index.js";

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
    return firstAnswer([...this.members].map((m) => m.requestPermission(...args)));
  }

  requestUserInput(...args: Parameters<ReverseRequester["requestUserInput"]>) {
    return firstAnswer([...this.members].map((m) => m.requestUserInput(...args)));
  }
}

/** The first promise to resolve with a value; undefined once all resolved without one (a failure counts as none). */
function firstAnswer<T>(answers: Array<Promise<T | undefined>>): Promise<T | undefined> {
  if (answers.length === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let remaining = answers.length;
    const settle = (value: T | undefined) => {
      remaining--;
      if (value !== undefined) resolve(value);
      else if (remaining === 0) resolve(undefined);
    };
    for (const answer of answers) answer.then(settle, () => settle(undefined));
  });
}
