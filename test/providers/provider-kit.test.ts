import { describe, expect, it } from 'vitest';
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { parseWire } from '../../src/providers/provider-kit.js';
import type { WireParser } from '../../src/providers/provider-kit.js';
import { AssistantMessageBuilder } from '../../src/providers/message-builder.js';
import { ProviderError } from '../../src/types/errors.js';
import type { StreamEvent } from '../../src/types/provider.js';

/** A toy protocol: `t:<text>` appends text, `stop` is the terminal event, `boom` an error event. */
class ToyParser implements WireParser<string> {
  constructor(private readonly builder: AssistantMessageBuilder) {}
  push(event: string, emit: (e: StreamEvent) => void): void {
    if (event === 'boom') throw ProviderError.api('toy error event');
    if (event === 'stop') emit(this.builder.finish('stop'));
    else emit(this.builder.text(event.slice(2)));
  }
  end(): void {
    throw ProviderError.network('toy stream ended before stop');
  }
}

/** Runs the toy protocol over a cold wire and checks the StreamEvent types (s start, t text, d done). */
function expectParsed(wire: string, values: Record<string, string>, expected: string, wireError?: unknown): void {
  new TestScheduler((actual, wanted) => expect(actual).toEqual(wanted)).run(({ cold, expectObservable }) => {
    const builder = new AssistantMessageBuilder('m', 'toy', 0);
    const types = cold(wire, values, wireError).pipe(
      parseWire(builder, new ToyParser(builder)),
      map((e) => ({ start: 's', textDelta: 't', done: 'd' })[e.type as 'start' | 'textDelta' | 'done']),
    );
    expectObservable(types).toBe(expected, { s: 's', t: 't', d: 'd' }, expect.any(ProviderError));
  });
}

describe('parseWire', () => {
  it('emits start before the first output, then the parser events and done; completes at the body end', () => {
    expectParsed('a----b-c-|', { a: 't:He', b: 't:llo', c: 'stop' }, '(st)-t-d-|');
  });

  it('ignores wire events after done and swallows a transport error once the message is whole', () => {
    expectParsed('a----c-b-a-#', { a: 't:x', b: 't:late', c: 'stop' }, '(st)-d-----|', new Error('socket reset while draining'));
  });

  it('fails with what the parser throws: a mid-stream error event, or end() when the body ends early', () => {
    expectParsed('a----x-c|', { a: 't:x', x: 'boom', c: 'stop' }, '(st)-#');
    expectParsed('a----|', { a: 't:x' }, '(st)-#');
  });

  it('emits nothing, not even start, when the wire fails before its first event', () => {
    expectParsed('--#', {}, '--#', ProviderError.rateLimited('429', 1000));
  });
});
