/**
 * A number read at the first ask within a turn of the event loop and kept until that turn ends, so
 * every later ask in the same turn gets the same reading. The slow-consumer rules use it for what a
 * client had left unread before the turn's burst of writes began: the frames of one turn (a
 * replayed backlog, say) are one burst the client has had no chance to read yet, not a sign that it
 * reads too slowly.
 */
export class TickStartReading {
  private value: number | undefined;

  constructor(private readonly read: () => number) {}

  get(): number {
    if (this.value === undefined) {
      this.value = this.read();
      process.nextTick(() => (this.value = undefined));
    }
    return this.value;
  }
}
