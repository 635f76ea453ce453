import type { OpenRequest } from "./requests.js";

/**
 * The prompts a relay sends again on a new link (RelayDialect.rejoins), and what the gateway sends
 * meanwhile. Such a request goes with an idempotency key of the relay's (a Codex turn/start, an Ask
 * session/send; an ACP session/prompt with its turn id): sent again, it answers as the first one
 * did if the gateway had it, and runs only if it never arrived. Either way the client gets the one
 * answer it waits for, under its own id.
 *
 * Where a dialect's client reads a prompt's answer before what the prompt brought about (Codex: a
 * client subscribes to a turn once it knows its id; Ask: what follows a request comes after its
 * answer), the gateway's notifications and requests that come while a resent prompt is open (the
 * resumes replay the turn's start) wait here for its answer (`holdsOthers`). ACP's prompt is
 * answered when its turn ends, after its updates: nothing waits for it.
 */
export class RelayRejoins {
  private readonly open = new Set<OpenRequest>();
  private readonly waiting: string[] = [];
  /** While what waited is being passed on: it goes through as it is, not back into `waiting`. */
  private releasing = false;

  constructor(
    private readonly holdsOthers: boolean,
    /** Passes on a message of the gateway that waited (as it came). */
    private readonly release: (text: string) => void,
  ) {}

  /** A request of the lost link, sent again on the next: open until the client has its answer. */
  add(request: OpenRequest): void {
    this.open.add(request);
    // Settled right after its answer is written: what waited goes out after it.
    void request.answered.then(() => {
      this.open.delete(request);
      if (this.open.size === 0) this.releaseAll();
    });
  }

  /** Whether the gateway's message `text` waits for the open prompts' answers (`answers`: it answers some request). */
  holds(text: string, answers: boolean): boolean {
    if (!this.holdsOthers || answers || this.open.size === 0 || this.releasing) return false;
    this.waiting.push(text);
    return true;
  }

  /**
   * Passes on what waits (the link is lost: it came from the gateway, and is the client's), even
   * while prompts are still open: kept back, it would not count as passed on, so the next link's
   * resumes would replay it and the client would get it twice.
   */
  releaseAll(): void {
    this.releasing = true;
    try {
      for (const text of this.waiting.splice(0)) this.release(text);
    } finally {
      this.releasing = false;
    }
  }
}
