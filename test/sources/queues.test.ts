import { describe, expect, it } from 'vitest';
import { MessageQueue, type QueuedMessage, userMessage } from '../../src/index.js';

/** The text of a queued user message. */
function text(item: QueuedMessage): string {
  const content = (item.message as { content: string | ReadonlyArray<{ type: string; text?: string }> }).content;
  return typeof content === 'string' ? content : content.map((block) => block.text ?? '').join('');
}

describe('MessageQueue arrivals', () => {
  it('added$ tells each subscriber every message pushed while it is subscribed, in order', () => {
    const queue = new MessageQueue();
    queue.push(userMessage('before', 0));
    const a: unknown[] = [];
    const b: unknown[] = [];
    const subA = queue.added$.subscribe((item) => a.push(text(item)));
    queue.push(userMessage('one', 0), 'interrupt');
    const subB = queue.added$.subscribe((item) => b.push(text(item)));
    queue.push(userMessage('two', 0));
    subA.unsubscribe();
    queue.push(userMessage('three', 0));
    subB.unsubscribe();
    queue.push(userMessage('four', 0));
    expect(a).toEqual(['one', 'two']);
    expect(b).toEqual(['two', 'three']);
    expect(queue.size).toBe(5); // watching takes nothing
  });

  it('watchAdded calls a listener registered twice twice, stops each registration on its own, and carries the policy', () => {
    const queue = new MessageQueue();
    const seen: string[] = [];
    const listener = (item: { policy?: string }): void => void seen.push(item.policy ?? 'none');
    const stopFirst = queue.watchAdded(listener);
    const stopSecond = queue.watchAdded(listener);
    queue.push(userMessage('x', 0), 'skip');
    stopFirst();
    queue.push(userMessage('y', 0));
    stopSecond();
    stopSecond(); // stopping twice is harmless
    queue.push(userMessage('z', 0));
    expect(seen).toEqual(['skip', 'skip', 'none']);
  });

  it('a push is told to those watching when it was pushed, even when one of them stops another or adds one', () => {
    const queue = new MessageQueue();
    const seen: string[] = [];
    let stopB: () => void = () => undefined;
    queue.watchAdded(() => {
      seen.push('a');
      stopB();
      queue.watchAdded(() => seen.push('late'));
    });
    stopB = queue.watchAdded(() => seen.push('b'));
    queue.push(userMessage('x', 0));
    expect(seen).toEqual(['a', 'b']);
    seen.length = 0;
    queue.push(userMessage('y', 0));
    expect(seen).toEqual(['a', 'late']);
  });
});
