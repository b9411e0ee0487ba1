import { describe, expect, it } from 'vitest';
import { filter, map, type OperatorFunction, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { isLoopState, loopState, runToolCalls, type LoopOutput, type LoopState } from '../../../src/index.js';
import { TOOL_TEXTS } from '../../../src/sources/tool-run.js';
import type { ToolCall } from '../../../src/types/content.js';
import { emptyAssistant, textOf, userMessage, type AssistantMessage, type LlmMessage, type StopReason } from '../../../src/types/message.js';
import type { AnyTool } from '../../../src/types/tool.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** A tool that answers "<name> done" after `ms` virtual milliseconds. */
function slow(name: string, ms: number): AnyTool {
  return {
    name, label: name, description: `the ${name} tool`, parameters: { type: 'object' },
    execute: (_args, ctx) => timer(ms, ctx.scheduler).pipe(map(() => `${name} done`)),
  };
}
const call = (name: string): ToolCall => ({ type: 'toolCall', id: name, name, arguments: {} });
const calling = (stopReason: StopReason, ...names: string[]): AssistantMessage => ({ ...emptyAssistant('m', 'p', 0), content: names.map(call), stopReason });
const stateWith = (assistant: AssistantMessage): LoopState => ({ ...loopState('L1', [userMessage('go', 0)]), turnIndex: 3, assistant });

/** Tool starts as upper case, ends as lower case, the final state as "s"; messages left out. */
const trace: OperatorFunction<LoopOutput, string> = (out$) =>
  out$.pipe(
    filter((o) => o.type === 'ToolExecutionStart' || o.type === 'ToolExecutionEnd' || isLoopState(o)),
    map((o) => (o.type === 'ToolExecutionStart' ? o.toolName.toUpperCase() : o.type === 'ToolExecutionEnd' ? o.toolName : 's')),
  );

describe('runToolCalls', () => {
  it('two calls with the same id each get their own result, in call order', () => {
    const outputs: LoopOutput[] = [];
    scheduler().run(({ cold }) => {
      const echo: AnyTool = { name: 'echo', label: 'echo', description: 'echoes', parameters: { type: 'object' }, execute: (args) => String((args as { n: number }).n) };
      const twice: AssistantMessage = {
        ...emptyAssistant('m', 'p', 0), stopReason: 'toolUse',
        content: [{ type: 'toolCall', id: 'same', name: 'echo', arguments: { n: 1 } }, { type: 'toolCall', id: 'same', name: 'echo', arguments: { n: 2 } }],
      };
      cold('-s|', { s: stateWith(twice) }).pipe(runToolCalls({ tools: [echo] })).subscribe((o) => outputs.push(o));
    });
    expect((outputs.at(-1) as LoopState).toolResults?.map(textOf)).toEqual(['1', '2']);
  });

  it('runs the calls and hands on the results in call order, whatever order they finished in', () => {
    const outputs: LoopOutput[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const tools = [slow('a', 30), slow('b', 10)];
      const out$ = cold('-s|', { s: stateWith(calling('toolUse', 'a', 'b')) }).pipe(runToolCalls({ tools }));
      expectObservable(out$.pipe(trace)).toBe('-(AB) 6ms b 19ms (as|)');
      out$.subscribe((o) => outputs.push(o));
    });
    const state = outputs.at(-1) as LoopState;
    expect(state.toolResults?.map((r) => [r.toolCallId, textOf(r), (r as LlmMessage).turnId])).toEqual([
      ['a', 'a done', { loopId: 'L1', turnIndex: 3 }],
      ['b', 'b done', { loopId: 'L1', turnIndex: 3 }],
    ]);
    expect(state.messages).toHaveLength(1); // the results are handed on, not added to the context
  });

  it('answers a call that a toolCalls stage dropped with an error result', () => {
    const outputs: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const stage = runToolCalls({ tools: [slow('a', 1), slow('b', 1)], toolCalls: filter((c) => c.name !== 'b') });
      cold('s|', { s: stateWith(calling('toolUse', 'a', 'b')) }).pipe(stage).subscribe((o) => outputs.push(o));
      flush();
    });
    const state = outputs.at(-1) as LoopState;
    expect(state.toolResults?.map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['a', false, 'a done'],
      ['b', true, 'Tool call was dropped before dispatch.'],
    ]);
    expect(outputs.filter((o) => o.type === 'MessageEnd')).toHaveLength(2);
  });

  it('never runs the calls of a message cut off at length', () => {
    const outputs: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      cold('s|', { s: stateWith(calling('length', 'a')) }).pipe(runToolCalls({ tools: [slow('a', 1)] })).subscribe((o) => outputs.push(o));
      flush();
    });
    const [result] = (outputs.at(-1) as LoopState).toolResults ?? [];
    expect(result && textOf(result)).toContain(TOOL_TEXTS.truncated);
  });

  it('hands on a pre-dispatch stop and injected messages in the state', () => {
    const outputs: LoopOutput[] = [];
    const note = userMessage('noted', 1);
    scheduler().run(({ cold, flush }) => {
      const stage = runToolCalls({
        tools: [slow('a', 1), slow('b', 1)],
        strategy: 'sequential',
        preDispatch: [(c, ctx) => (c.name === 'a' && ctx.messages.length === 1 ? { action: 'inject', messages: [note] } : { action: 'stop', reason: 'enough' })],
      });
      cold('s|', { s: stateWith(calling('toolUse', 'a', 'b')) }).pipe(stage).subscribe((o) => outputs.push(o));
      flush();
    });
    const state = outputs.at(-1) as LoopState;
    expect(state.pending).toEqual([note]);
    expect(state.stopRequested).toBe('enough');
    expect(state.toolResults?.map((r) => textOf(r))).toEqual(['a done', 'Skipped: enough']);
  });

  it('passes through a state with no calls, no message, or an error message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const none = stateWith(calling('stop'));
      const idle = loopState('L1');
      const failed = stateWith(calling('error', 'a'));
      expectObservable(cold('-n-i-f|', { n: none, i: idle, f: failed }).pipe(runToolCalls({ tools: [slow('a', 1)] }))).toBe('-n-i-f|', { n: none, i: idle, f: failed });
    });
  });
});
