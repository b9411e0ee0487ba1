import { describe, expect, it } from 'vitest';
import { filter, map, type OperatorFunction, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { answerOpenCalls, isLoopState, loopState, openToolCalls, recordToolResults, runToolCalls, type LoopOutput, type LoopState } from '../../../src/index.js';
import type { ToolCall } from '../../../src/types/content.js';
import { emptyAssistant, textOf, userMessage, type AgentMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import type { AnyTool } from '../../../src/types/tool.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const slow = (name: string, ms: number): AnyTool => ({
  name, label: name, description: name, parameters: { type: 'object' },
  execute: (_args, ctx) => timer(ms, ctx.scheduler).pipe(map(() => `${name} done`)),
});
const call = (name: string): ToolCall => ({ type: 'toolCall', id: name, name, arguments: {} });
const calling = (...names: string[]): AssistantMessage => ({ ...emptyAssistant('m', 'p', 0), content: names.map(call), stopReason: 'toolUse' });
const resultOf = (name: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: name, toolName: name, content: [{ type: 'text', text: 'earlier' }], isError: false, timestamp: 0 });
const trace: OperatorFunction<LoopOutput, string> = (out$) =>
  out$.pipe(
    filter((o) => o.type === 'ToolExecutionStart' || o.type === 'ToolExecutionEnd' || isLoopState(o)),
    map((o) => (o.type === 'ToolExecutionStart' ? o.toolName.toUpperCase() : o.type === 'ToolExecutionEnd' ? o.toolName : 's')),
  );

describe('answerOpenCalls', () => {
  it('runs only the calls without results, records them, and leaves no assistant or toolResults behind', () => {
    const tools = [slow('a', 5), slow('b', 5)];
    const messages: AgentMessage[] = [userMessage('go', 0), calling('a', 'b'), resultOf('b')];
    const outputs: LoopOutput[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const out$ = cold('s|', { s: loopState('L1', messages) }).pipe(answerOpenCalls(runToolCalls({ tools }), recordToolResults()));
      expectObservable(out$.pipe(trace)).toBe('A 4ms (as|)');
      out$.subscribe((o) => outputs.push(o));
    });
    const state = outputs.at(-1) as LoopState;
    expect(state.messages.map((m) => (m.role === 'toolResult' ? `${m.toolCallId}:${textOf(m)}` : m.role))).toEqual(['user', 'assistant', 'b:earlier', 'a:a done']);
    expect(state.assistant).toBeUndefined();
    expect(state.toolResults).toBeUndefined();
  });

  it('passes a state through when every call is answered, the last assistant message did not call tools, or the run has ended', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const stage = answerOpenCalls(runToolCalls({ tools: [slow('a', 5)] }), recordToolResults());
      const answered = loopState('L1', [userMessage('go', 0), calling('a'), resultOf('a')]);
      const ended = { ...loopState('L1', [userMessage('go', 0), calling('a')]), ended: 'aborted' as const };
      expectObservable(cold('xy|', { x: answered, y: ended }).pipe(stage, trace)).toBe('ss|');
    });
    expect(openToolCalls([userMessage('go', 0), { ...emptyAssistant('m', 'p', 0), content: [{ type: 'text', text: 'hi' }], stopReason: 'stop' }])).toBeUndefined();
  });
});
