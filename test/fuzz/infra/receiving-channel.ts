/**
 * What every fuzz channel does with what the gateway sends: hands each message to the listeners,
 * keeps the messages that arrive while nobody listens for the next listener (nothing goes
 * unchecked), and knows when and how the connection closed.
 */
export abstract class ReceivingChannel {
  private readonly listeners = new Set<(text: string) => void>();
  private readonly unheard: string[] = [];
  closeCode: number | undefined;
  private settleClosed!: (code: number) => void;
  private readonly closedPromise = new Promise<number>((resolve) => (this.settleClosed = resolve));

  onMessage(listener: (text: string) => void): () => void {
    this.listeners.add(listener);
    for (const text of this.unheard.splice(0)) listener(text);
    return () => this.listeners.delete(listener);
  }

  /** The close code, once the connection closed within `timeoutMs`; undefined otherwise. */
  closed(timeoutMs: number): Promise<number | undefined> {
    return Promise.race([this.closedPromise, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref())]);
  }

  protected deliver(text: string): void {
    if (this.listeners.size === 0) this.unheard.push(text);
    for (const listener of this.listeners) listener(text);
  }

  /** The connection closed with `code` (the first call counts). */
  protected ended(code: number): void {
    if (this.closeCode !== undefined) return;
    this.closeCode = code;
    this.settleClosed(code);
  }
}
