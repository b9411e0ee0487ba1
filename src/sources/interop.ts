import { filter, lastValueFrom, map, type Observable } from 'rxjs';
import type { AgentEndEvent, AgentEvent } from '../types/events.js';
import type { AgentMessage } from '../types/message.js';

/**
 * An AsyncIterable view of any Observable, for `for await`. Values are buffered while the
 * consumer is busy; breaking out of the loop unsubscribes (which tears the run down).
 *
 * @example
 * for await (const event of toAsyncIterable(agentLoop(prompts, context, config))) console.log(event.type);
 */
export function toAsyncIterable<T>(source: Observable<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const buffer: T[] = [];
      const waiting: Array<{ resolve(r: IteratorResult<T>): void; reject(e: unknown): void }> = [];
      let done = false;
      let failure: { error: unknown } | undefined;
      const subscription = source.subscribe({
        next(value) {
          const w = waiting.shift();
          if (w) w.resolve({ value, done: false });
          else buffer.push(value);
        },
        error(error: unknown) {
          failure = { error };
          for (const w of waiting.splice(0)) w.reject(error);
        },
        complete() {
          done = true;
          for (const w of waiting.splice(0)) w.resolve({ value: undefined, done: true });
        },
      });
      return {
        next(): Promise<IteratorResult<T>> {
          if (buffer.length > 0) return Promise.resolve({ value: buffer.shift()!, done: false });
          if (failure) return Promise.reject(failure.error);
          if (done) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
        },
        return(): Promise<IteratorResult<T>> {
          subscription.unsubscribe();
          done = true;
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}

/** The AgentEnd of a run, as a Promise. */
export function runToEnd(run$: Observable<AgentEvent>): Promise<AgentEndEvent> {
  return lastValueFrom(run$.pipe(filter((e): e is AgentEndEvent => e.type === 'AgentEnd')));
}

/** The messages a run added, as a Promise. */
export function newMessages(run$: Observable<AgentEvent>): Promise<AgentMessage[]> {
  return lastValueFrom(run$.pipe(filter((e): e is AgentEndEvent => e.type === 'AgentEnd'), map((e) => e.messages)));
}
