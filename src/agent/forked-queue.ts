import type { Subscription } from 'rxjs';
import { MessageQueue, type QueuedMessage } from '../sources/queues.js';

/** One queue seen by N parallel branches, each through its own copy. */
export interface ForkedQueue {
  /** One queue per branch: what was queued before the fork, then every message pushed to the source while forked. */
  readonly branches: readonly MessageQueue[];
  /**
   * The adopted branch's view becomes the truth: the messages it consumed leave the source queue
   * (they are in the adopted conversation); every other message stays queued there, in order.
   */
  adopt(index: number): void;
  /** Stops mirroring pushes into the branches. Without `adopt`, the source queue is left as it was. */
  dispose(): void;
}

/**
 * Forks a steering or follow-up queue for a best-of-N run. The branches never take from `source`
 * itself, so a message a losing branch consumed is not lost: until `adopt`, `source` still holds
 * everything queued before or during the run.
 *
 * @example
 * const steering = forkQueue(agentSteering, 3);
 * // branch i runs with steering.branches[i]; when branch 2 wins:
 * steering.adopt(2);
 * steering.dispose();
 */
export function forkQueue(source: MessageQueue, count: number): ForkedQueue {
  const branches = Array.from({ length: count }, () => new MessageQueue(source.mode));
  const copy = (branch: MessageQueue, item: QueuedMessage) => branch.push(item.message, item.policy);
  for (const item of source.peek()) for (const branch of branches) copy(branch, item);
  const mirror: Subscription = source.added$.subscribe((item) => {
    for (const branch of branches) copy(branch, item);
  });
  return {
    branches,
    adopt: (index) => {
      const branch = branches[index];
      if (!branch) return;
      const unconsumed = new Set(branch.peek().map((item) => item.message));
      const kept = source.take('all').filter((item) => unconsumed.has(item.message));
      source.unshift(kept);
    },
    dispose: () => mirror.unsubscribe(),
  };
}
