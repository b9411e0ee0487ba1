import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { toMessageEvents } from '../../src/operators/to-message-events.js';
import type { AgentEvent } from '../../src/types/events.js';
import { emptyAssistant, type AssistantMessage } from '../../src/types/message.js';
import type { StreamEvent } from '../../src/types/provider.js';
import { ProviderError } from '../../src/types/errors.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const loopId = 'sess.cfg.1';

/** A provider-like stream: deltas share one live partial; `done` carries the final message. */
function stream() {
  const partial = emptyAssistant('model', 'prov', 0);
  const final: AssistantMessage = {
    ...emptyAssistant('model', 'prov', 0),
    content: [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'Hi!' }, { type: 'toolCall', id: 'c1', name: 'read', arguments: { p: 1 } }],
    stopReason: 'toolUse',
  };
  const events: Record<string, StreamEvent> = {
    s: { type: 'start', partial },
    h: { type: 'thinkingDelta', contentIndex: 0, delta: 'hm', partial },
    t: { type: 'textDelta', contentIndex: 1, delta: 'Hi', partial },
    u: { type: 'textDelta', contentIndex: 1, delta: '!', partial },
    c: { type: 'toolCallStart', contentIndex: 2, id: 'c1', name: 'read', partial },
    a: { type: 'toolCallDelta', contentIndex: 2, delta: '{"p":1}', partial },
    d: { type: 'done', message: final },
  };
  return { partial, final, events };
}

describe('toMessageEvents', () => {
  it('emits one MessageStart, a MessageUpdate per delta and a MessageEnd with the final message, in scheduler time', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const { partial, final, events } = stream();
      const source = cold('-s-h-t-u-c-a-d|', events);
      const expected: Record<string, AgentEvent> = {
        S: { type: 'MessageStart', loopId, message: partial, timestamp: 1 },
        H: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'thinking', contentIndex: 0, delta: 'hm' }, timestamp: 3 },
        T: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: 'Hi' }, timestamp: 5 },
        U: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: '!' }, timestamp: 7 },
        C: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'toolCall', contentIndex: 2, delta: '', id: 'c1', name: 'read' }, timestamp: 9 },
        A: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'toolCall', contentIndex: 2, delta: '{"p":1}' }, timestamp: 11 },
        E: { type: 'MessageEnd', loopId, message: final, timestamp: 13 },
      };
      expectObservable(source.pipe(toMessageEvents({ loopId, now: () => ts.now() }))).toBe('-S-H-T-U-C-A-E|', expected);
    });
  });

  it('gives an argument delta no id or name: only the start of a tool call carries them', () => {
    const { events } = stream();
    const deltas: AgentEvent[] = [];
    scheduler().run(({ cold }) => {
      cold('sca|', events).pipe(toMessageEvents({ loopId, now: () => 0 })).subscribe((e) => deltas.push(e));
    });
    const updates = deltas.filter((e) => e.type === 'MessageUpdate');
    expect(updates.map((e) => e.type === 'MessageUpdate' && e.delta)).toEqual([
      { type: 'toolCall', contentIndex: 2, delta: '', id: 'c1', name: 'read' },
      { type: 'toolCall', contentIndex: 2, delta: '{"p":1}' },
    ]);
  });

  it('keeps a single lifecycle across a retry: a second `start` emits no second MessageStart', () => {
    const partials: AssistantMessage[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const { partial, final, events } = stream();
      const retryPartial = emptyAssistant('model', 'prov', 9);
      const withRetry: Record<string, StreamEvent> = { ...events, r: { type: 'start', partial: retryPartial } };
      const source = cold('-s-t-r-u-d|', withRetry);
      const events$ = source.pipe(toMessageEvents({ loopId, now: () => 0, onPartial: (p) => partials.push(p) }));
      expectObservable(events$).toBe('-S-T---U-E|', {
        S: { type: 'MessageStart', loopId, message: partial, timestamp: 0 },
        T: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: 'Hi' }, timestamp: 0 },
        U: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: '!' }, timestamp: 0 },
        E: { type: 'MessageEnd', loopId, message: final, timestamp: 0 },
      });
    });
    // Whoever tracks the partial for recovery hears about every snapshot, the retry's new message too.
    expect(partials).toHaveLength(5); // s, t, r, u, d
    expect(partials[2]).toEqual(emptyAssistant('model', 'prov', 9));
    expect(partials[4]!.stopReason).toBe('toolUse');
  });

  it('starts the message on the first delta when the provider sent no `start`', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const { partial, events } = stream();
      expectObservable(cold('-t---|', events).pipe(toMessageEvents({ loopId, now: () => 0 }))).toBe('-(ST)|', {
        S: { type: 'MessageStart', loopId, message: partial, timestamp: 0 },
        T: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: 'Hi' }, timestamp: 0 },
      });
    });
  });

  it('emits Start and End for a stream that is only `done`', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const { final, events } = stream();
      expectObservable(cold('--d---|', events).pipe(toMessageEvents({ loopId, now: () => 0 }))).toBe('--(SE)|', {
        S: { type: 'MessageStart', loopId, message: final, timestamp: 0 },
        E: { type: 'MessageEnd', loopId, message: final, timestamp: 0 },
      });
    });
  });

  it('passes a provider error through after the events so far', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const { partial, events } = stream();
      const error = ProviderError.network('connection reset');
      expectObservable(cold('-s-t-#', events, error).pipe(toMessageEvents({ loopId, now: () => 0 }))).toBe('-S-T-#', {
        S: { type: 'MessageStart', loopId, message: partial, timestamp: 0 },
        T: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 1, delta: 'Hi' }, timestamp: 0 },
      }, error);
    });
  });

  it('hands onPartial the message of start, of every delta, and the final message of done', () => {
    const { partial, final, events } = stream();
    const seen: AssistantMessage[] = [];
    scheduler().run(({ cold }) => {
      cold('stud|', events).pipe(toMessageEvents({ loopId, now: () => 0, onPartial: (p) => seen.push(p) })).subscribe();
    });
    expect(seen).toEqual([partial, partial, partial, final]);
    expect(seen[0]).toBe(partial);
    expect(seen[3]).toBe(final);
  });

  it('hands onEnd the final message of done, before its MessageEnd, and only then', () => {
    const { final, events } = stream();
    const seen: string[] = [];
    scheduler().run(({ cold }) => {
      cold('stud|', events)
        .pipe(toMessageEvents({ loopId, now: () => 0, onEnd: (m) => seen.push(m === final ? 'onEnd(final)' : 'onEnd(other)') }))
        .subscribe((e) => seen.push(e.type));
    });
    expect(seen).toEqual(['MessageStart', 'MessageUpdate', 'MessageUpdate', 'onEnd(final)', 'MessageEnd']);
  });

  it('does not call onEnd for a stream that ends without done', () => {
    const { events } = stream();
    let ended = 0;
    scheduler().run(({ cold }) => {
      cold('st|', events).pipe(toMessageEvents({ loopId, now: () => 0, onEnd: () => ended++ })).subscribe();
    });
    expect(ended).toBe(0);
  });

  it('allocates no copy of the message per delta: every update points at the same live partial', () => {
    const { partial, events } = stream();
    const updates: AgentEvent[] = [];
    scheduler().run(({ cold }) => {
      cold('stutu|', events).pipe(toMessageEvents({ loopId, now: () => 0 })).subscribe((e) => updates.push(e));
    });
    for (const e of updates) expect(e.type === 'MessageUpdate' || e.type === 'MessageStart' ? e.message : undefined).toBe(partial);
  });

  it('unsubscribes from the provider stream when its subscriber does', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const { events } = stream();
      const source = cold('-s-t-u-d|', events);
      expectObservable(source.pipe(toMessageEvents({ loopId, now: () => 0 })), '^--!').toBe('-S-', {
        S: expect.objectContaining({ type: 'MessageStart' }),
      });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
