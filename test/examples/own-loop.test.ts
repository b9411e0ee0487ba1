import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { main, ownLoop, summariseOlderTurns, vetoTool } from '../../examples/own-loop.js';
import { isLoopState, loopState, type LoopState } from '../../src/index.js';
import { textOf, userMessage } from '../../src/types/message.js';

describe('examples/own-loop', () => {
  it('runs two turns from the exported stages; the vetoed tool never runs, its result tells the model', async () => {
    const lines: string[] = [];
    const final = await main((l) => lines.push(l));
    expect(lines).toContain('ToolExecutionStart:read_note');
    expect(lines.filter((l) => l.startsWith('TurnStart'))).toEqual(['TurnStart:0', 'TurnStart:1']);
    expect(lines.at(-1)).toBe('final: 6 messages, turn 2, note still there: true');
    // The summariser folded the history before the prompt into one message (and that again on turn 1); the call stayed in the message, answered.
    expect(final.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
    expect(final.messages[0] && final.messages[0].role === 'user' && textOf(final.messages[0])).toMatch(/^\[Summary of .*\[Summary of 2 earlier messages: Hi! Keep my notes tidy\. \/ And be brief\.\]\]$/);
  });

  it('the tool results the model saw on its second call: read_note ran, delete_note was not run and says so', async () => {
    const outputs = await lastValueFrom(ownLoop('list?').pipe(toArray()));
    const ends = outputs.filter((o) => !isLoopState(o) && o.type === 'TurnEnd');
    expect(ends).toHaveLength(2);
    const first = ends[0]!;
    expect(first.type === 'TurnEnd' && first.toolResults.map((r) => [r.toolName, textOf(r), r.isError])).toEqual([
      ['read_note', 'milk, eggs, bread', false],
      ['delete_note', '[delete_note is not allowed here; the call was not run.]', true],
    ]);
  });

  it('its own stages are plain operators over the state value, and leave their input alone', async () => {
    const state: LoopState = loopState('x', [userMessage('a', 0), userMessage('b', 1)]);
    const [summarised] = await lastValueFrom(of(state).pipe(summariseOlderTurns(), toArray()));
    expect((summarised as LoopState).messages).toHaveLength(2);
    expect(state.messages.map((m) => m.role === 'user' && textOf(m))).toEqual(['a', 'b']);
    const veto = vetoTool('delete_note');
    expect(veto({ type: 'toolCall', id: '1', name: 'delete_note', arguments: {} }, { messages: [] })).toEqual({ action: 'skip', reason: '[delete_note is not allowed here; the call was not run.]' });
    expect(veto({ type: 'toolCall', id: '2', name: 'read_note', arguments: {} }, { messages: [] })).toBeUndefined();
  });
});
