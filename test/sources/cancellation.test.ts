import { describe, expect, it } from 'vitest';
import { firstValueFrom } from 'rxjs';
import { fromAbortSignal, linkedAbortController, onAbort } from '../../src/sources/cancellation.js';

describe('onAbort', () => {
  it('calls every waiting callback once, in the order they started waiting, behind one listener', () => {
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
    const calls: string[] = [];
    onAbort(controller.signal, () => calls.push('a'));
    const stopB = onAbort(controller.signal, () => calls.push('b'));
    onAbort(controller.signal, () => calls.push('c'));
    stopB();
    controller.abort();
    controller.abort();
    expect(calls).toEqual(['a', 'c']);
    expect(listeners).toBe(1);
  });

  it('backs fromAbortSignal and linkedAbortController', async () => {
    const controller = new AbortController();
    const fired = firstValueFrom(fromAbortSignal(controller.signal));
    const link = linkedAbortController(controller.signal);
    const unlinked = linkedAbortController(controller.signal);
    unlinked.dispose();
    controller.abort('why');
    await fired;
    expect(link.controller.signal.reason).toBe('why');
    expect(unlinked.controller.signal.aborted).toBe(false);
  });
});
