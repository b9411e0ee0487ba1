import { describe, expect, it } from 'vitest';
import { map, Subject, take } from 'rxjs';
import { Broadcast, listenTo, MessageQueue, type QueuedMessage, userMessage } from '../../src/index.js';

/** The text of a queued user message. */
function text(item: QueuedMessage): string {
  const content = (item.message as { content: string | ReadonlyArray<{ type: string; text?: string }> }).content;
  return typeof content === 'string' ? content : content.map((block) => block.text ?? '').join('');
}

describe('MessageQueue arrivals (a Broadcast)', () => {
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

  it('listenTo calls a listener registered twice twice, stops each registration on its own, and carries the policy', () => {
    const queue = new MessageQueue();
    const seen: string[] = [];
    const listener = (item: { policy?: string }): void => void seen.push(item.policy ?? 'none');
    const stopFirst = listenTo(queue.added$, listener);
    const stopSecond = listenTo(queue.added$, listener);
    queue.push(userMessage('x', 0), 'skip');
    stopFirst();
    queue.push(userMessage('y', 0));
    stopSecond();
    stopSecond(); // stopping twice is harmless
    queue.push(userMessage('z', 0));
    expect(seen).toEqual(['skip', 'skip', 'none']);
  });

  it('a push is told to those watching when it was pushed, as a Subject tells its subscribers: one stopped meanwhile gets nothing, one added meanwhile only the next', () => {
    const queue = new MessageQueue();
    const seen: string[] = [];
    let stopB: () => void = () => undefined;
    listenTo(queue.added$, () => {
      seen.push('a');
      stopB();
      listenTo(queue.added$, () => seen.push('late'));
    });
    stopB = listenTo(queue.added$, () => seen.push('b'));
    queue.push(userMessage('x', 0));
    expect(seen).toEqual(['a']);
    seen.length = 0;
    queue.push(userMessage('y', 0));
    expect(seen).toEqual(['a', 'late']);
  });
});

describe('Broadcast', () => {
  it('hands each value to subscribers and listeners of that moment; keeps nothing for later ones', () => {
    const b = new Broadcast<number>();
    b.next(0);
    const subscribed: number[] = [];
    const listened: number[] = [];
    const subscription = b.subscribe((v) => subscribed.push(v));
    const stop = listenTo(b, (v) => listened.push(v));
    b.next(1);
    subscription.unsubscribe();
    b.next(2);
    stop();
    b.next(3);
    expect(subscribed).toEqual([1]);
    expect(listened).toEqual([1, 2]);
  });

  it('listenTo subscribes any other Observable, and its stop unsubscribes', () => {
    const subject = new Subject<string>();
    const seen: string[] = [];
    const stop = listenTo(subject, (v) => seen.push(v));
    subject.next('a');
    stop();
    subject.next('b');
    expect(seen).toEqual(['a']);
    expect(subject.observed).toBe(false);
  });

  it('asObservable hands out the receiving side: no next, the same values, and listenTo takes it as the Broadcast', () => {
    const b = new Broadcast<number>();
    const view = b.asObservable();
    expect('next' in view).toBe(false);
    expect(b.asObservable()).toBe(view);
    const subscribed: number[] = [];
    const listened: number[] = [];
    const subscription = view.subscribe((v) => subscribed.push(v));
    const stop = listenTo(view, (v) => listened.push(v));
    b.next(1);
    stop();
    b.next(2);
    subscription.unsubscribe();
    b.next(3);
    expect(subscribed).toEqual([1, 2]);
    expect(listened).toEqual([1]);
    // A plain listener (not a Subscriber): what it throws reaches the caller of next, as with the Broadcast itself.
    const stopThrowing = listenTo(view, () => {
      throw new Error('listener failed');
    });
    expect(() => b.next(4)).toThrow('listener failed');
    stopThrowing();
    expect(() => b.next(5)).not.toThrow();
  });

  it("a queue's added$ cannot be pushed into, cast or not", () => {
    const queue = new MessageQueue();
    expect('next' in queue.added$).toBe(false);
    const seen: string[] = [];
    const stop = listenTo(queue.added$, (item) => seen.push(text(item)));
    queue.push(userMessage('hi'));
    stop();
    expect(seen).toEqual(['hi']);
  });

  it('works with operators, as any Observable does', () => {
    const b = new Broadcast<number>();
    const seen: number[] = [];
    b.pipe(map((v) => v * 10), take(2)).subscribe((v) => seen.push(v));
    b.next(1);
    b.next(2);
    b.next(3);
    expect(seen).toEqual([10, 20]);
  });
});
