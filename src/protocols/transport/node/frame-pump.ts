import type { ServerResponse } from 'node:http';
import type { SchedulerAction, SchedulerLike } from 'rxjs';
import type { LoggedFrame, RunLog } from '../run-log.js';
import { encodeTransportFrame, EventStreamError, HEARTBEAT_FRAME, TRANSPORT_EVENTS } from '../wire.js';

export interface FramePumpOptions {
  /** A heartbeat comment after this many ms of silence. */
  heartbeatMs: number;
  scheduler: SchedulerLike;
}

/**
 * Writes a run's frames to one client as fast as its socket takes them, and no faster: frames are
 * pulled from the run's replay buffer ({@link RunLog}) while `res.write` has room, and the pump
 * waits for `drain` when it has not, or for the run's next frame when the client is caught up. A
 * client that does not read costs the server its socket's buffer and one frame, whatever the size
 * of the run; one that falls so far behind that its next frames left the replay buffer gets a
 * `phi-rx:error` `ResumeGap` frame (a fresh connection then gets the run from its snapshot). Ends
 * the response after the run's last frame. Returns what stops it (the client went).
 */
export function pumpFrames(log: RunLog, afterId: number, res: ServerResponse, options: FramePumpOptions): () => void {
  const start = log.startAfter(afterId);
  if (start instanceof EventStreamError) {
    res.end(encodeTransportFrame(TRANSPORT_EVENTS.error, { code: start.code, message: start.message }));
    return () => undefined;
  }
  let pending: LoggedFrame[] = start.frames;
  let index = 0;
  let cursor = start.cursor; // the id the frames fetched so far reach
  let stopped = false;
  let lastWrite = options.scheduler.now();
  const write = (text: string): void => {
    lastWrite = options.scheduler.now();
    res.write(text);
  };

  const pump = (): void => {
    while (!stopped && !res.writableNeedDrain) {
      if (index < pending.length) {
        write(pending[index++]!.text);
        continue;
      }
      const next = log.framesSince(cursor);
      if (next === undefined) {
        const message = `this client fell behind: the events after ${cursor} left the replay buffer before it read them; reload the run`;
        return end(encodeTransportFrame(TRANSPORT_EVENTS.error, { code: 'ResumeGap', message }));
      }
      if (next.length === 0) {
        if (log.isOver) end('');
        return; // the run's next frame pumps again
      }
      pending = next;
      index = 0;
      cursor = next[next.length - 1]!.id;
    }
  };
  const heartbeat = options.scheduler.schedule(function (this: SchedulerAction<undefined>) {
    if (stopped) return;
    if (!res.writableNeedDrain && options.scheduler.now() - lastWrite >= options.heartbeatMs) write(HEARTBEAT_FRAME);
    this.schedule(undefined, options.heartbeatMs);
  }, options.heartbeatMs);
  const stopAppend = log.onAppend(pump);
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    stopAppend();
    heartbeat.unsubscribe();
    res.off('drain', pump);
  };
  const end = (last: string): void => {
    stop();
    res.end(last);
  };
  res.on('drain', pump);
  pump();
  return stop;
}
