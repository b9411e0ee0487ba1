/** filterInput stops at the first rejection: neither later filters nor later messages of the batch are asked. */
import { firstValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { filterInput } from '../../src/operators/filter-input.js';
import { type InputFilter, InputVerdict } from '../../src/types/hooks.js';
import { type AgentMessage, textOf, userMessage } from '../../src/types/message.js';

const text = (m: AgentMessage): string => (m.role === 'user' ? textOf(m) : '');

describe('filterInput: the first rejection ends the asking', () => {
  it('later filters are not asked about a rejected message', async () => {
    const asked: string[] = [];
    const reject: InputFilter = (m) => (asked.push(`reject ${text(m)}`), InputVerdict.reject('no'));
    const later: InputFilter = (m) => (asked.push(`later ${text(m)}`), InputVerdict.pass());
    const result = await firstValueFrom(of([userMessage('a', 0)]).pipe(filterInput([reject, later])));
    expect(result).toMatchObject({ action: 'reject', reason: 'no' });
    expect(asked).toEqual(['reject a']);
  });

  it('the messages after a rejected one in the batch are not shown to the filters', async () => {
    const asked: string[] = [];
    const filter: InputFilter = (m) => (asked.push(text(m)), text(m) === 'b' ? InputVerdict.reject('not b') : InputVerdict.pass());
    const result = await firstValueFrom(of([userMessage('a', 0), userMessage('b', 1), userMessage('c', 2)]).pipe(filterInput([filter])));
    expect(result).toMatchObject({ action: 'reject', reason: 'not b' });
    expect(asked).toEqual(['a', 'b']);
  });
});
