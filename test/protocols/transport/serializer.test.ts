import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { coalesceDeltas, createEventRebuilder, createWireEncoder, toSseFrames, toWireEvent, withHeartbeats } from '../../../src/protocols/transport/index.js';
import { runEvents } from '../../view/fixtures.js';
import type { AgentEvent, StreamDelta } from '../../../src/types/events.js';
import { applyDelta, startPartial } from '../../../src/index.js';
import { emptyAssistant, type AssistantMessage } from '../../../src/types/message.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('toSseFrames()', () => {
  it('one frame per event: monotonic id, event type, compact JSON data with only the delta (marbles)', () => {
    const { ev } = runEvents();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-A-u-|', ev).pipe(toSseFrames({ firstId: 7 }))).toBe('-a-b-|', {
        a: `id: 7\nevent: AgentStart\ndata: ${JSON.stringify(ev.A)}\n\n`,
        b: 'id: 8\nevent: MessageUpdate\ndata: {"type":"MessageUpdate","loopId":"s.cfg.1","delta":{"type":"text","contentIndex":0,"delta":"Hel"},"timestamp":1}\n\n',
      });
    });
  });

  it('keeps a multi-line text on one data line', () => {
    const { ev } = runEvents();
    const update = { ...ev.u!, delta: { type: 'text' as const, contentIndex: 0, delta: 'a\nb\r\n\nc' } };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: update }).pipe(toSseFrames())).toBe('a|', {
        a: `id: 1\nevent: MessageUpdate\ndata: ${JSON.stringify(toWireEvent(update))}\n\n`,
      });
    });
    expect(JSON.stringify(toWireEvent(update))).not.toMatch(/[\r\n]/);
  });
});

describe('createWireEncoder() / createEventRebuilder()', () => {
  it('leave out of TurnEnd and AgentEnd exactly the messages their MessageEnds carried, and put them back', () => {
    const { ev } = runEvents();
    const sequence = ['A', 'P', 'p', 'M', 'u', 'v', 'c', 'd', 'm', 't', 'Z'].map((k) => ev[k]!);
    const encode = createWireEncoder();
    const wire = sequence.map(encode);
    const turnEnd = wire[9]!;
    const agentEnd = wire[10]!;
    expect(turnEnd.type === 'TurnEnd' && turnEnd.message).toBeUndefined();
    expect(agentEnd.type === 'AgentEnd' && agentEnd.messages).toBeUndefined();
    const rebuild = createEventRebuilder();
    const back = wire.map(rebuild);
    expect(back[9]).toEqual(ev.t);
    expect(back[10]).toEqual(ev.Z);
  });

  it('a MessageEnd the receiver rebuilds exactly from its deltas goes without its message (text, thinking, tool calls)', () => {
    const loop = 's.cfg.1';
    const start = emptyAssistant('m', 'p', 1);
    const deltas: StreamDelta[] = [
      { type: 'thinking', contentIndex: 0, delta: 'hm' },
      { type: 'text', contentIndex: 1, delta: 'Hi ' },
      { type: 'text', contentIndex: 1, delta: 'there' },
      { type: 'toolCall', contentIndex: 2, delta: '', id: 'c1', name: 'add' },
      { type: 'toolCall', contentIndex: 2, delta: '{"a":' },
      { type: 'toolCall', contentIndex: 2, delta: '1}' },
    ];
    const final = deltas.reduce(applyDelta, startPartial(start)).message;
    const run = (end: AssistantMessage) => {
      const encode = createWireEncoder();
      const rebuild = createEventRebuilder();
      const events: AgentEvent[] = [
        { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: loop, timestamp: 0 },
        { type: 'MessageStart', loopId: loop, message: start, timestamp: 1 },
        ...deltas.map((delta): AgentEvent => ({ type: 'MessageUpdate', loopId: loop, message: start, delta, timestamp: 1 })),
        { type: 'MessageEnd', loopId: loop, message: end, timestamp: 2 },
      ];
      const wire = events.map(encode);
      return { wire: wire.at(-1)!, back: wire.map(rebuild).at(-1)! };
    };
    const exact = run({ ...final, usage: { ...final.usage, output: 7 } });
    expect(exact.wire).not.toHaveProperty('message');
    expect(exact.wire).toHaveProperty('messagePatch', { usage: { ...final.usage, output: 7 } });
    expect(exact.back).toEqual({ type: 'MessageEnd', loopId: loop, message: { ...final, usage: { ...final.usage, output: 7 } }, timestamp: 2 });
    expect(final.content[2]).toEqual({ type: 'toolCall', id: 'c1', name: 'add', arguments: { a: 1 } });
    // a final message whose content differs from the deltas (the provider repaired the JSON) is sent in full
    const repaired = { ...final, content: [...final.content.slice(0, 2), { type: 'toolCall' as const, id: 'c1', name: 'add', arguments: { a: 2 } }] };
    expect(run(repaired).wire).toHaveProperty('message', repaired);
  });

  it('send a TurnEnd message that differs from the last MessageEnd in full', () => {
    const { ev } = runEvents();
    const encode = createWireEncoder();
    [ev.A!, ev.P!, ev.p!].forEach(encode);
    const wire = encode(ev.t!); // its message is the assistant's, the last MessageEnd was the prompt
    expect(wire).toEqual(ev.t);
  });

  it('a client that joined mid-run is told to connect from the start', () => {
    const { ev } = runEvents();
    const encode = createWireEncoder();
    const wire = ['A', 'P', 'p', 'M', 'm', 't'].map((k) => encode(ev[k]!));
    const rebuild = createEventRebuilder();
    expect(() => rebuild(wire[5]!)).toThrow(/TurnEnd of loop s\.cfg\.1 refers to MessageEnd events this client never received/);
  });
});

describe('withHeartbeats()', () => {
  it('beats after each idle period, never while values flow (marbles)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a------b----|').pipe(withHeartbeats(3, 'h'))).toBe('-a--h--hb--h-|');
    });
  });

  it('rejects a non-positive period', () => {
    expect(() => withHeartbeats(0, 'h')).toThrow(/idleMs must be a positive number of ms, got 0/);
  });
});

describe('createEventRebuilder()', () => {
  it('gives each MessageUpdate its rebuilt partial and names the loop of an orphan delta', () => {
    const { ev } = runEvents();
    const rebuild = createEventRebuilder();
    rebuild(toWireEvent(ev.M!));
    const first = rebuild(toWireEvent(ev.u!));
    const second = rebuild(toWireEvent(ev.v!));
    expect(first.type === 'MessageUpdate' && first.message.content).toEqual([{ type: 'text', text: 'Hel' }]);
    expect(second.type === 'MessageUpdate' && second.message.content).toEqual([{ type: 'text', text: 'Hello' }]);
    // a MessageReset: the following deltas build on its message
    const kept: AgentEvent = { type: 'MessageReset', loopId: 's.cfg.1', reason: 'retryDiverged', message: { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'He' }] }, timestamp: 1 };
    rebuild(toWireEvent(kept));
    const afterReset = rebuild(toWireEvent({ ...ev.u!, delta: { type: 'text', contentIndex: 0, delta: 'y' } } as never));
    expect(afterReset.type === 'MessageUpdate' && afterReset.message.content).toEqual([{ type: 'text', text: 'Hey' }]);
    expect(() => createEventRebuilder()(toWireEvent(ev.u!))).toThrow(/MessageUpdate for loop s\.cfg\.1 arrived before its MessageStart/);
  });
});

describe('coalesceDeltas()', () => {
  it('merges deltas of one block until another event, the window or the end (marbles)', () => {
    const { ev } = runEvents();
    const s = scheduler();
    const merged = { ...ev.v!, delta: { type: 'text' as const, contentIndex: 0, delta: 'HelloHel' } };
    s.run(({ cold, expectObservable }) => {
      const source = cold('-u-v-u-c--d-|', ev);
      // c names a new tool call: it flushes the text run and starts its own, which d extends
      const call = { ...ev.d!, delta: { type: 'toolCall' as const, contentIndex: 1, delta: '{"city":"Paris"}', id: 'c1', name: 'weather' } };
      expectObservable(source.pipe(coalesceDeltas(10, s))).toBe('-------m----(x|)', { m: { ...ev.u!, delta: merged.delta }, x: call });
      expectObservable(cold('-u-v-------------|', ev).pipe(coalesceDeltas(5, s))).toBe('------a----------|', { a: { ...ev.v!, delta: { type: 'text', contentIndex: 0, delta: 'Hello' } } });
    });
  });
});
