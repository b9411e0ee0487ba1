import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { main, ownLoop, summariseOlderTurns, vetoTool } from '../../examples/own-loop.js';
import { isLoopState, loopState, type LoopState } from '../../src/operators/index.js';
import { emptyAssistant, textOf, userMessage } from '../../src/types/message.js';

describe('examples/own-loop', () => {
  it('runs two turns from the exported stages; the vetoed tool never runs, the model is told', async () => {
    const lines: string[] = [];
    const final = await main((l) => lines.push(l));
    expect(lines).toContain('ToolExecutionStart:read_note');
    expect(lines.some((l) => l.includes('delete_note'))).toBe(false);
    expect(lines.filter((l) => l.startsWith('TurnStart'))).toEqual(['TurnStart:0', 'TurnStart:1']);
    expect(lines.at(-1)).toBe('final: 3 messages, turn 2, note still there: true');
    // Turn 2 started from the veto note; the summariser folded everything before it into one message.
    expect(final.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
    expect(final.messages[0] && final.messages[0].role === 'user' && textOf(final.messages[0])).toMatch(/^\[Summary of 4 earlier messages: /);
    expect(final.messages[1] && final.messages[1].role === 'user' && textOf(final.messages[1])).toBe('[delete_note is not allowed here; the call was not run.]');
  });

  it('the tool results the model saw on its first call came from read_note only', async () => {
    const outputs = await lastValueFrom(ownLoop('list?').pipe(toArray()));
    const ends = outputs.filter((o) => !isLoopState(o) && o.type === 'TurnEnd');
    expect(ends).toHaveLength(2);
    const first = ends[0]!;
    expect(first.type === 'TurnEnd' && first.toolResults.map((r) => [r.toolName, textOf(r)])).toEqual([['read_note', 'milk, eggs, bread']]);
  });

  it('its own stages are plain operators over the state value, and leave their input alone', async () => {
    const state: LoopState = loopState('x', [userMessage('a', 0), userMessage('b', 1)]);
    const [summarised] = await lastValueFrom(of(state).pipe(summariseOlderTurns(), toArray()));
    expect((summarised as LoopState).messages).toHaveLength(2);
    expect(state.messages.map((m) => m.role === 'user' && textOf(m))).toEqual(['a', 'b']);
    const asking = { ...emptyAssistant('m', 'p', 0), content: [{ type: 'toolCall' as const, id: '1', name: 'delete_note', arguments: {} }] };
    const [guarded] = await lastValueFrom(of({ ...state, assistant: asking }).pipe(vetoTool('delete_note'), toArray()));
    expect((guarded as LoopState).assistant?.content).toEqual([]);
    expect(asking.content).toHaveLength(1);
  });
});
