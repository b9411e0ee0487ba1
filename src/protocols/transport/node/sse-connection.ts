import type { ServerResponse } from 'node:http';

/**
 * One client's event stream, written with regard for backpressure: once `res.write` says the
 * socket is full, frames wait (as references, not copies) until `drain`. Its producer asks
 * {@link drained} before it fetches more, so what waits for a client that does not read is at
 * most what was fetched last (one batch), whatever the size of the run.
 */
export class SseConnection {
  private readonly waiting: string[] = [];
  private blocked = false;
  private ending: string | undefined;
  private closed = false;
  private readonly onDrained: Array<() => void> = [];

  constructor(private readonly res: ServerResponse) {
    res.on('drain', () => this.flush());
    res.once('close', () => {
      this.closed = true;
      this.waiting.length = 0;
      this.release();
    });
  }

  /** True once the response ended or the client went. */
  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** Resolves once everything written so far went to the socket (at once when nothing waits), or the client went. */
  drained(): Promise<void> {
    if (!this.blocked || this.isClosed) return Promise.resolve();
    return new Promise((resolve) => this.onDrained.push(resolve));
  }

  write(text: string): void {
    if (this.isClosed || this.ending !== undefined) return;
    if (this.blocked) this.waiting.push(text);
    else if (!this.res.write(text)) this.blocked = true;
  }

  /** Ends the response after what is still waiting (and `last`). */
  end(last = ''): void {
    if (this.isClosed || this.ending !== undefined) return;
    this.ending = last;
    if (!this.blocked) this.finish();
  }

  private flush(): void {
    this.blocked = false;
    let next = 0;
    while (!this.blocked && next < this.waiting.length && !this.isClosed) {
      if (!this.res.write(this.waiting[next++]!)) this.blocked = true;
    }
    this.waiting.splice(0, next);
    if (this.blocked) return;
    if (this.ending !== undefined) this.finish();
    this.release();
  }

  private release(): void {
    for (const resolve of this.onDrained.splice(0)) resolve();
  }

  private finish(): void {
    if (this.isClosed) return;
    this.closed = true;
    this.res.end(this.ending);
  }
}
