import type { ServerResponse } from 'node:http';
import { encodeUIMessageChunk, UI_MESSAGE_STREAM_DONE } from '../ui-message-stream.js';
import type { ChatRunLog, Segment } from './chat-run-log.js';

/** The SSE comment written to an idle stream (the AI SDK's own: its parser skips comments). */
export const KEEP_ALIVE_FRAME = ': keep-alive\n\n';

/**
 * Writes a segment of a chat's run to one response, from chunk `from`, as fast as the socket
 * takes it and no faster (it waits for `drain`, or for the next chunk), then `[DONE]` and the
 * end: after the run's last chunk, or after the segment's (the run waits for approvals: a
 * `finish` first). `prefix` goes first (the `start` of a response that does not begin at chunk 0).
 * After `keepAliveMs` without a write (a long tool call) it writes a keep-alive comment, so that
 * proxies keep the connection. Returns what stops it (the client went).
 */
export function pumpChunks(log: ChatRunLog, segment: Segment, from: number, res: ServerResponse, prefix?: string, keepAliveMs: number | false = 15_000): () => void {
  let cursor = from;
  let stopped = false;
  let stopChange = (): void => undefined;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const keepAlive = (): void => {
    if (keepAliveMs === false || stopped) return;
    clearTimeout(idle);
    idle = setTimeout(() => {
      if (!stopped && !res.writableNeedDrain) res.write(KEEP_ALIVE_FRAME);
      keepAlive();
    }, keepAliveMs);
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    clearTimeout(idle);
    stopChange();
    res.off('drain', pump);
  };
  const pump = (): void => {
    while (!stopped && !res.writableNeedDrain) {
      const end = segment.end ?? log.chunks.length;
      if (cursor < end) {
        res.write(encodeUIMessageChunk(log.chunks[cursor++]!));
        continue;
      }
      if (segment.end === undefined) return void keepAlive(); // the next chunk pumps again
      const last = log.chunks[end - 1];
      const closed = last !== undefined && (last.type === 'finish' || last.type === 'abort' || last.type === 'error');
      stop();
      res.end((closed ? '' : encodeUIMessageChunk({ type: 'finish' })) + UI_MESSAGE_STREAM_DONE);
      return;
    }
  };
  if (prefix) res.write(prefix);
  res.on('drain', pump);
  pump();
  if (!stopped) stopChange = log.onChange(pump);
  return stop;
}
