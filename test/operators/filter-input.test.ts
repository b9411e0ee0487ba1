import { describe, expect, it } from 'vitest';
import { firstValueFrom, type Observable, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { filterInput, type FilteredInput } from '../../src/operators/filter-input.js';
import { type InputFilter, InputVerdict } from '../../src/types/hooks.js';
import type { AgentMessage, AssistantMessage, ToolResultMessage } from '../../src/types/message.js';
import { extensionMessage, textOf, userMessage } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const hello = userMessage('hello', 1);
const secret = userMessage('my password is hunter2', 2);

/** The text of a user message (extension messages have none). */
const textIn = (m: AgentMessage | undefined): string => (m === undefined || m.role === 'extension' ? '' : textOf(m));

const noSecrets: InputFilter = (m) => (textIn(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());
const warnAlways = (msg: string): InputFilter => () => InputVerdict.warn(msg);

function run(batch: readonly AgentMessage[], filters: readonly InputFilter[]): Promise<FilteredInput> {
  return firstValueFrom(of(batch).pipe(filterInput(filters)));
}

const assistant: AssistantMessage = {
  role: 'assistant', content: [{ type: 'text', text: 'password?' }], stopReason: 'stop', model: 'm', provider: 'p', usage: Usage.empty(), timestamp: 3,
};
const toolResult: ToolResultMessage = {
  role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'password=1' }], isError: false, timestamp: 4,
};

describe('filterInput', () => {
  it('passes a clean batch through unchanged, with no warnings', async () => {
    const out = await run([hello], [noSecrets]);
    expect(out).toEqual({ action: 'pass', messages: [hello], warnings: [] });
    expect((out as { messages: AgentMessage[] }).messages[0]).toBe(hello);
  });

  it('passes everything when there are no filters', async () => {
    expect(await run([secret], [])).toEqual({ action: 'pass', messages: [secret], warnings: [] });
  });

  it('appends "[Warning: msg]" to the user message text and reports the warning', async () => {
    const out = await run([hello], [warnAlways('be careful')]);
    expect(out.action).toBe('pass');
    if (out.action !== 'pass') return;
    expect(out.warnings).toEqual(['be careful']);
    expect(textIn(out.messages[0])).toBe('hello\n[Warning: be careful]');
    // The input is not mutated: the caller's message still says what the user wrote.
    expect(textOf(hello)).toBe('hello');
  });

  it('appends every warning, in filter order', async () => {
    const out = await run([hello], [warnAlways('first'), () => InputVerdict.pass(), warnAlways('second')]);
    if (out.action !== 'pass') throw new Error('expected pass');
    expect(out.warnings).toEqual(['first', 'second']);
    expect(textIn(out.messages[0])).toBe('hello\n[Warning: first]\n[Warning: second]');
  });

  it('adds a text block with the warning to a message that has no text (an image only)', async () => {
    const picture = userMessage([{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], 5);
    const out = await run([picture], [warnAlways('unchecked image')]);
    if (out.action !== 'pass') throw new Error('expected pass');
    expect((out.messages[0] as { content: unknown[] }).content).toEqual([
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'text', text: '[Warning: unchecked image]' },
    ]);
  });

  it('rejects the batch when a filter says Reject, naming the message and the reason', async () => {
    expect(await run([hello, secret], [noSecrets])).toEqual({ action: 'reject', reason: 'no secrets', message: secret });
  });

  it('runs filters in order: the first Reject wins over later ones and over warnings', async () => {
    const order: string[] = [];
    const tracked = (name: string, verdict: InputVerdict): InputFilter => () => {
      order.push(name);
      return verdict;
    };
    const out = await run([hello], [
      tracked('warn', InputVerdict.warn('hmm')),
      tracked('first', InputVerdict.reject('first reason')),
      tracked('second', InputVerdict.reject('second reason')),
    ]);
    expect(out).toEqual({ action: 'reject', reason: 'first reason', message: hello });
    expect(order.slice(0, 2)).toEqual(['warn', 'first']);
  });

  it('leaves non-user messages untouched and never shows them to the filters', async () => {
    const seen: AgentMessage[] = [];
    const spy: InputFilter = (m) => {
      seen.push(m);
      return InputVerdict.warn('flagged');
    };
    const ext = extensionMessage('note', { a: 1 }, 6);
    const out = await run([assistant, toolResult, ext, hello], [spy, noSecrets]);
    if (out.action !== 'pass') throw new Error('expected pass');
    expect(seen).toEqual([hello]);
    expect(out.messages[0]).toBe(assistant);
    expect(out.messages[1]).toBe(toolResult);
    expect(out.messages[2]).toBe(ext);
    expect(textIn(out.messages[3])).toBe('hello\n[Warning: flagged]');
  });

  it('awaits a filter that answers with a Promise', async () => {
    const asyncReject: InputFilter = async (m) => (m === secret ? InputVerdict.reject('async no') : InputVerdict.pass());
    expect(await run([secret], [asyncReject])).toEqual({ action: 'reject', reason: 'async no', message: secret });
    expect(await run([hello], [asyncReject])).toEqual({ action: 'pass', messages: [hello], warnings: [] });
  });

  it('waits for a filter that answers with an Observable, in virtual time, one batch after another', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      // The filter answers after 3 frames; batch b arrives at 3 while a is still being checked, so it waits (4 → 7).
      const slow: InputFilter = (m) => cold('---v|', { v: m === secret ? InputVerdict.reject('no secrets') : InputVerdict.warn('slow') });
      const batches: Observable<readonly AgentMessage[]> = hot('-a-b---|', { a: [hello], b: [secret] });
      const warned = userMessage([{ type: 'text', text: 'hello\n[Warning: slow]' }], 1);
      expectObservable(batches.pipe(filterInput([slow]))).toBe('----A--(B|)', {
        A: { action: 'pass', messages: [warned], warnings: ['slow'] },
        B: { action: 'reject', reason: 'no secrets', message: secret },
      });
    });
  });

  it('reads an Observable filter that completes without a verdict as Pass', async () => {
    const silent: InputFilter = () => of<InputVerdict>().pipe();
    expect(await run([hello], [silent])).toEqual({ action: 'pass', messages: [hello], warnings: [] });
  });

  it('turns a filter that throws into a rejection naming the error', async () => {
    const broken: InputFilter = () => {
      throw new Error('regex exploded');
    };
    expect(await run([hello], [broken])).toEqual({ action: 'reject', reason: 'Input filter failed: regex exploded', message: hello });
  });

  it('turns an async filter that throws (a rejected Promise) into a rejection too', async () => {
    const broken: InputFilter = async () => {
      throw new Error('moderation API down');
    };
    expect(await run([hello], [broken])).toEqual({ action: 'reject', reason: 'Input filter failed: moderation API down', message: hello });
  });

  it('turns an Observable filter that errors into a rejection too', async () => {
    const broken: InputFilter = () => throwError(() => new Error('stream broke'));
    expect(await run([hello], [broken])).toEqual({ action: 'reject', reason: 'Input filter failed: stream broke', message: hello });
  });
});
