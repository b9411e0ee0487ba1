import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { z } from 'zod';
import { checkOutput, loopState, type LoopState } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AssistantMessage } from '../../../src/types/message.js';
import type { StandardSchemaV1 } from '../../../src/tools/standard-schema.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const Age = z.object({ name: z.string(), age: z.number() });
const prompt = userMessage('who?', 0);
const answer = (text: string): AssistantMessage => ({ ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text }] });
/** A run that ended by itself (decideNext found nothing more to do) with `text` as its answer. */
const endOf = (text: string, extra: Partial<LoopState> = {}): LoopState => ({ ...loopState('L', [prompt, answer(text)]), ended: 'stop', ...extra });
const reopened = ({ ended: _e, ...state }: LoopState): LoopState => state;

describe('checkOutput', () => {
  it('a valid answer leaves the state with the output value; an invalid one asks once for a correction, then fails', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const good = endOf('{"name":"Ada","age":36}');
      const bad = endOf('{"name":"Ada","age":"old"}');
      const badAgain = endOf('not json', { output: { status: 'retrying', issues: [] } });
      const correction = userMessage(
        'Your answer did not match the required output schema:\n- $.age: Invalid input: expected number, received string\nAnswer again with only the corrected JSON object.',
        3, // the frame of b
      );
      expectObservable(cold('-g-b-c|', { g: good, b: bad, c: badAgain }).pipe(checkOutput(Age))).toBe('-G-B-C|', {
        G: { ...good, output: { status: 'valid', value: { name: 'Ada', age: 36 } } },
        B: { ...reopened(bad), pending: [correction], output: { status: 'retrying', issues: [{ path: '$.age', message: 'Invalid input: expected number, received string' }] } },
        C: {
          ...badAgain,
          output: {
            status: 'invalid',
            failure: {
              message: 'The answer did not match the output schema after a corrective turn:\n- $: not valid JSON (Unexpected token \'o\', "not json" is not valid JSON)',
              issues: [{ path: '$', message: 'not valid JSON (Unexpected token \'o\', "not json" is not valid JSON)' }],
              text: 'not json',
            },
          },
        },
      });
    });
  });

  it('passes through a state still running, failed, stopped or aborted, and does not change the state it is given', () => {
    const states = {
      r: endOf('nope', { ended: undefined }),
      e: endOf('nope', { ended: 'error' }),
      m: endOf('nope', { ended: 'maxTurns' }),
      p: endOf('nope', { stopRequested: 'policy said so' }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('remp|', states).pipe(checkOutput(Age))).toBe('remp|', states);
    });
    const controller = new AbortController();
    controller.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const ended = endOf('nope');
      expectObservable(cold('a|', { a: ended }).pipe(checkOutput(Age, { signal: controller.signal }))).toBe('a|', { a: ended });
    });
    const bad = endOf('{}');
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('b|', { b: bad }).pipe(checkOutput(Age))).toBe('n|', { n: expect.objectContaining({ output: expect.objectContaining({ status: 'retrying' }) }) });
    });
    expect(bad.pending).toEqual([]);
    expect(bad.ended).toBe('stop');
    expect(bad.output).toBeUndefined();
  });

  it('an answer cut by the token limit (ended "length") is checked too', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const cut = endOf('{"name":"Ada","ag', { ended: 'length' });
      expectObservable(cold('c|', { c: cut }).pipe(checkOutput(Age))).toBe('n|', {
        n: expect.objectContaining({ output: { status: 'retrying', issues: [expect.objectContaining({ path: '$' })] } }),
      });
    });
  });

  it('validates against a JSON Schema, reading a fenced ```json answer, with the paths of the failures', () => {
    const schema = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, required: ['tags'] };
    scheduler().run(({ cold, expectObservable }) => {
      const fenced = endOf('```json\n{"tags":["a",2]}\n```');
      const ok = endOf('```json\n{"tags":["a"]}\n```');
      expectObservable(cold('fo|', { f: fenced, o: ok }).pipe(checkOutput(schema))).toBe('FO|', {
        F: expect.objectContaining({ output: { status: 'retrying', issues: [{ path: '$.tags[1]', message: 'Instance type "number" is invalid. Expected "string".' }] } }),
        O: { ...ok, output: { status: 'valid', value: { tags: ['a'] } } },
      });
    });
  });

  it('an empty answer is an issue at $; the value is the schema output (transforms applied)', () => {
    const Trimmed = z.object({ city: z.string().transform((s) => s.trim().toUpperCase()) });
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('ec|', { e: endOf(''), c: endOf('{"city":" paris "}') }).pipe(checkOutput(Trimmed))).toBe('EC|', {
        E: expect.objectContaining({ output: { status: 'retrying', issues: [{ path: '$', message: 'the answer is empty, expected a JSON object' }] } }),
        C: expect.objectContaining({ output: { status: 'valid', value: { city: 'PARIS' } } }),
      });
    });
  });

  it('waits for an asynchronous Standard Schema validation', async () => {
    const asyncSchema: StandardSchemaV1<unknown, { ok: true }> & { toJSONSchema(): object } = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: async (v) => ((v as { ok?: unknown }).ok === true ? { value: { ok: true } } : { issues: [{ message: 'must be ok', path: [{ key: 'ok' }] }] }),
      },
      toJSONSchema: () => ({ type: 'object', properties: { ok: { const: true } } }),
    };
    const { firstValueFrom, of } = await import('rxjs');
    const out = await firstValueFrom(of(endOf('{"ok":false}')).pipe(checkOutput(asyncSchema)));
    expect(out).toMatchObject({ output: { status: 'retrying', issues: [{ path: '$.ok', message: 'must be ok' }] } });
  });
});
