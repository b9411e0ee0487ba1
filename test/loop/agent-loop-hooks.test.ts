import { describe, expect, it } from 'vitest';
import { defer, of, Observable } from 'rxjs';
import { agentLoop, InputVerdict, MessageQueue, textOf, toolUpdate, userMessage, type AgentEvent, type AgentMessage, type AnyTool, type LoopHooks } from '../../src/index.js';
import { addTool, agentEnd, config, context, events, run } from '../agent/helpers.js';

const toolCycle = [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }];
const types = (all: { type: string }[]): string[] => all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type);

describe('hooks (spec 003)', () => {
  it('accept a value, a Promise or an Observable', async () => {
    const seen: string[] = [];
    const hooks: LoopHooks = {
      beforeLoop: () => of(true),
      beforeTurn: async () => {
        seen.push('turn');
        return true;
      },
      beforeToolExecution: () => defer(() => of(true)),
      afterTurn: () => Promise.resolve(),
    };
    const all = await run(toolCycle, [addTool], { hooks });
    expect(agentEnd(all).stopReason).toBe('stop');
    expect(seen).toEqual(['turn', 'turn']);
  });

  it('before_loop false: only AgentEnd with no messages', async () => {
    const all = await run(toolCycle, [addTool], { hooks: { beforeLoop: () => false } });
    expect(all.map((e) => e.type)).toEqual(['AgentEnd']);
    expect(agentEnd(all).messages).toEqual([]);
  });

  it('before_turn false: no TurnStart, the run ends', async () => {
    const all = await run(toolCycle, [addTool], { hooks: { beforeTurn: (_m, turn) => turn < 1 } });
    expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(1);
    expect(types(all).slice(-2)).toEqual(['TurnEnd', 'AgentEnd']);
  });

  it('before_tool false: error result, no ToolExecutionStart, execute never called', async () => {
    let executed = false;
    const tool: AnyTool = { ...addTool, execute: () => ((executed = true), '3') };
    const all = await run(toolCycle, [tool], { hooks: { beforeToolExecution: () => false } });
    expect(all.some((e) => e.type === 'ToolExecutionStart')).toBe(false);
    const end = all.find((e) => e.type === 'ToolExecutionEnd');
    expect(end).toMatchObject({ isError: true, result: { content: [{ type: 'text', text: 'Tool execution skipped by before_tool_execution hook.' }] } });
    expect(executed).toBe(false);
  });

  it('before_tool_execution_update false suppresses updates, after-update not called, result unaffected', async () => {
    const streaming: AnyTool = {
      ...addTool,
      execute: () =>
        new Observable((s) => {
          s.next(toolUpdate('half'));
          s.next(toolUpdate('almost'));
          s.next({ content: [{ type: 'text', text: 'done' }] });
          s.complete();
        }),
    };
    const after: string[] = [];
    const all = await run(toolCycle, [streaming], {
      hooks: { beforeToolExecutionUpdate: (_n, _id, text) => text !== 'half', afterToolExecutionUpdate: (_n, _id, text) => void after.push(text) },
    });
    expect(all.filter((e) => e.type === 'ToolExecutionUpdate').map((e) => textOf((e as Extract<AgentEvent, { type: "ToolExecutionUpdate" }>).partialResult))).toEqual(['almost']);
    expect(after).toEqual(['almost']);
    expect(all.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ isError: false, result: { content: [{ text: 'done' }] } });
  });

  it('a hook that throws is reported as HookError and treated as continue', async () => {
    const all = await run(toolCycle, [addTool], {
      hooks: {
        beforeTurn: () => {
          throw new Error('boom');
        },
        afterToolExecution: () => Promise.reject(new Error('late boom')),
      },
    });
    const errors = all.filter((e) => e.type === 'HookError');
    expect(errors.map((e) => (e as { hook: string }).hook)).toEqual(['beforeTurn', 'afterToolExecution', 'beforeTurn']);
    expect(errors[0]).toMatchObject({ message: 'boom' });
    expect(agentEnd(all).stopReason).toBe('stop');
  });
});

describe('input filters', () => {
  const noSecrets = (m: AgentMessage) =>
    JSON.stringify(m).includes('password') ? InputVerdict.reject('contains a password') : InputVerdict.pass();

  it('Reject: exactly AgentStart, InputRejected, AgentEnd; the context is unchanged', async () => {
    const history = [userMessage('earlier', 0)];
    const ctx = context([addTool], history);
    const all = await events(agentLoop([userMessage('my password is x', 0)], ctx, config([], { inputFilters: [noSecrets] })));
    expect(all.map((e) => e.type)).toEqual(['AgentStart', 'InputRejected', 'AgentEnd']);
    expect(agentEnd(all)).toMatchObject({ messages: [], rejection: 'contains a password' });
    expect(ctx.messages).toEqual(history);
  });

  it('Warn appends "[Warning: msg]"; Pass leaves the message alone', async () => {
    const all = await run([{ text: 'ok' }], [], { inputFilters: [() => InputVerdict.warn('be careful'), () => InputVerdict.pass()] }, 'rm it');
    const prompt = agentEnd(all).messages[0]!;
    expect(textOf(prompt as never)).toBe('rm it\n[Warning: be careful]');
  });

  it('apply to steering and follow-ups: a rejected one is announced and dropped', async () => {
    const steering = new MessageQueue();
    const followUp = new MessageQueue();
    steering.push(userMessage('steer with password', 0));
    followUp.push(userMessage('follow up fine', 0));
    const all = await run([{ text: 'first' }, { text: 'second' }], [], { steering, followUp, inputFilters: [noSecrets] });
    expect(all.filter((e) => e.type === 'InputRejected')).toHaveLength(1);
    const users = agentEnd(all).messages.filter((m) => m.role === 'user').map((m) => textOf(m as never));
    expect(users).toEqual(['hi', 'follow up fine']);
  });
});
