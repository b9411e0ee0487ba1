import type { ServerResponse } from 'node:http';

/**
 * One client's event stream, written with regard for backpressure: once `res.write` says the
 * socket is full, frames wait (as references, not copies) until `drain`; a client for which more
 * than `maxUnsentBytes` wait is disconnected — it reconnects with `Last-Event-ID` and resumes. A
 * slow or stalled reader costs the server at most about `maxUnsentBytes` (plus the socket's
 * buffer and the frame that filled it), whatever the size of the run.
 */
export class SseConnection {
  private readonly waiting: string[] = [];
  private waitingBytes = 0;
  private blocked = false;
  private ending: string | undefined;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxUnsentBytes: number,
    private readonly onOverflow: () => void,
  ) {
    res.on('drain', () => this.flush());
    res.once('close', () => {
      this.closed = true;
      this.waiting.length = 0;
      this.waitingBytes = 0;
    });
  }

  /** True once the response ended or the client went. */
  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** Unsent bytes of this client: waiting here and buffered in the response and its socket. */
  get unsentBytes(): number {
    return this.waitingBytes + this.res.writableLength;
  }

  write(text: string): void {
    if (this.isClosed || this.ending !== undefined) return;
    if (this.blocked) {
      this.waiting.push(text);
      this.waitingBytes += text.length;
    } else if (!this.res.write(text)) this.blocked = true;
    // what waits behind the socket's buffer, not the frame that filled it: a frame larger than the limit still goes out whole
    if (this.waitingBytes > this.maxUnsentBytes) {
      this.closed = true;
      this.waiting.length = 0;
      this.waitingBytes = 0;
      this.res.destroy();
      this.onOverflow();
    }
  }

  /** Ends the response after what is still waiting (and `last`). */
  end(last = ''): void {
    if (this.isClosed || this.ending !== undefined) return;
    this.ending = last;
    if (!this.blocked) this.finish();
  }

  private flush(): void {
    this.blocked = false;
    while (!this.blocked && this.waiting.length > 0 && !this.isClosed) {
      const text = this.waiting.shift()!;
      this.waitingBytes -= text.length;
      if (!this.res.write(text)) this.blocked = true;
    }
    if (!this.blocked && this.ending !== undefined) this.finish();
  }

  private finish(): void {
    if (this.isClosed) return;
    this.closed = true;
    this.res.end(this.ending);
  }
}
