import { describe, expect, it } from 'vitest';
import {
  agentLoop, agentLoopContinue, InputVerdict, MessageQueue, textOf, userMessage, type AgentMessage, type AssistantMessage,
} from '../../src/index.js';
import { agentEnd, config, context, events } from '../agent/helpers.js';

const noSecrets = (m: AgentMessage) => (JSON.stringify(m).includes('password') ? InputVerdict.reject('contains a password') : InputVerdict.pass());

const answer = (text: string): AssistantMessage => ({
  role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop', model: 'm', provider: 'p',
  usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: 0,
});

describe('input filters and steering (issue 12)', () => {
  it('a steering message rejected mid-run starts no turn: InputRejected, then the run ends as if it had never been queued', async () => {
    const steering = new MessageQueue();
    const cfg = config([
      () => (steering.push(userMessage('my password is hunter2', 0)), { text: 'first' }),
      { text: 'never' },
    ], { steering, inputFilters: [noSecrets] });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(cfg.provider.requests).toHaveLength(1);
    const types = all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type);
    expect(types).toEqual([
      'AgentStart', 'TurnStart', 'MessageStart', 'MessageEnd', 'MessageStart', 'MessageEnd', 'TurnEnd', 'InputRejected', 'AgentEnd',
    ]);
    expect(agentEnd(all)).toMatchObject({ stopReason: 'stop' });
    expect(agentEnd(all).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('a rejected steering message does not swallow a follow-up that was queued: the follow-up turn runs', async () => {
    const steering = new MessageQueue();
    const followUp = new MessageQueue();
    followUp.push(userMessage('and then?', 0));
    const cfg = config([
      () => (steering.push(userMessage('password!', 0)), { text: 'first' }),
      { text: 'second' },
    ], { steering, followUp, inputFilters: [noSecrets] });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(cfg.provider.requests).toHaveLength(2);
    expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(2);
    expect(agentEnd(all).messages.filter((m) => m.role === 'user').map((m) => textOf(m as never))).toEqual(['hi', 'and then?']);
  });

  it('steering queued before a continuation and rejected at the first checkpoint: no turn, the model is never called', async () => {
    const steering = new MessageQueue();
    steering.push(userMessage('password please', 0));
    const cfg = config([{ text: 'never' }], { steering, inputFilters: [noSecrets] });
    const ctx = context([], [userMessage('hi', 0), answer('hello')]);
    const all = await events(agentLoopContinue(ctx, cfg));
    expect(cfg.provider.requests).toHaveLength(0);
    expect(all.map((e) => e.type)).toEqual(['AgentStart', 'InputRejected', 'AgentEnd']);
    expect(agentEnd(all).messages).toEqual([]);
  });

  it('steering queued before a prompted run and rejected at the first checkpoint: the prompt\'s turn alone runs', async () => {
    const steering = new MessageQueue();
    steering.push(userMessage('my password', 0));
    const cfg = config([{ text: 'answer' }, { text: 'never' }], { steering, inputFilters: [noSecrets] });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(cfg.provider.requests).toHaveLength(1);
    expect(cfg.provider.requests[0]!.messages.map((m) => textOf(m as never))).toEqual(['hi']);
    expect(all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type)).toEqual([
      'AgentStart', 'InputRejected', 'TurnStart', 'MessageStart', 'MessageEnd', 'MessageStart', 'MessageEnd', 'TurnEnd', 'AgentEnd',
    ]);
  });

  it('the first Reject short-circuits: later filters are not consulted', async () => {
    const consulted: string[] = [];
    const later = (m: AgentMessage) => (consulted.push(textOf(m as never)), InputVerdict.pass());
    const cfg = config([{ text: 'ok' }], { inputFilters: [noSecrets, later] });
    const all = await events(agentLoop([userMessage('a password', 0), userMessage('fine', 0)], context([]), cfg));
    expect(consulted).toEqual([]);
    expect(all.map((e) => e.type)).toEqual(['AgentStart', 'InputRejected', 'AgentEnd']);
    expect(cfg.provider.requests).toHaveLength(0);
  });

  it('AgentStart is the first event also when beforeLoop throws; the HookError follows it', async () => {
    const cfg = config([{ text: 'ok' }], { hooks: { beforeLoop: () => { throw new Error('boom'); } } });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(all.slice(0, 3).map((e) => e.type)).toEqual(['AgentStart', 'HookError', 'TurnStart']);
    expect(all[1]).toMatchObject({ hook: 'beforeLoop', message: 'boom' });
    expect(agentEnd(all).stopReason).toBe('stop');
  });
});
