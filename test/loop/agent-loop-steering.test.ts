import { describe, expect, it } from 'vitest';
import { Observable } from 'rxjs';
import { agentLoop, MessageQueue, textOf, userMessage, type AgentEvent, type AnyTool } from '../../src/index.js';
import { addTool, agentEnd, config, context, events, run, testScheduler } from '../agent/helpers.js';

const userTexts = (all: AgentEvent[]): string[] =>
  agentEnd(all).messages.filter((m) => m.role === 'user').map((m) => textOf(m as never));
const resultTexts = (all: AgentEvent[]): string[] =>
  agentEnd(all).messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m as never));

/** A tool that steers the agent while it runs, to place a steering message mid-batch. */
function steeringTool(queue: MessageQueue, text: string, policy?: 'wait' | 'skip' | 'interrupt'): AnyTool {
  return { ...addTool, name: 'steer_now', execute: () => (queue.push(userMessage(text, 0), policy), 'steered') };
}

const threeCalls = { toolCalls: [{ name: 'steer_now', arguments: { a: 0, b: 0 } }, { name: 'add', arguments: { a: 1, b: 1 } }, { name: 'add', arguments: { a: 2, b: 2 } }] };

describe('steering and follow-up queues', () => {
  it('sequential + skip: calls after the checkpoint get "Skipped due to queued user message."; steering joins the next turn', async () => {
    const steering = new MessageQueue();
    const all = await run([threeCalls, { text: 'ok' }], [steeringTool(steering, 'change of plan'), addTool], { steering, toolExecution: 'sequential', steeringPolicy: 'skip' });
    expect(resultTexts(all)).toEqual(['steered', 'Skipped due to queued user message.', 'Skipped due to queued user message.']);
    expect(userTexts(all)).toEqual(['hi', 'change of plan']);
    // The steering message enters after TurnStart of turn 1, before the model call.
    const i = all.findIndex((e) => e.type === 'TurnStart' && e.turnIndex === 1);
    expect(all[i + 1]).toMatchObject({ type: 'MessageStart', message: { role: 'user' } });
  });

  it('parallel never skips: the whole batch finishes first (checkpoint 5)', async () => {
    const steering = new MessageQueue();
    const all = await run([threeCalls, { text: 'ok' }], [steeringTool(steering, 'later'), addTool], { steering, steeringPolicy: 'skip' });
    expect(resultTexts(all)).toEqual(['steered', '2', '4']);
    expect(userTexts(all)).toEqual(['hi', 'later']);
  });

  it('wait policy runs every call even in sequential mode', async () => {
    const steering = new MessageQueue();
    const all = await run([threeCalls, { text: 'ok' }], [steeringTool(steering, 'later'), addTool], { steering, toolExecution: 'sequential', steeringPolicy: 'wait' });
    expect(resultTexts(all)).toEqual(['steered', '2', '4']);
  });

  it('a per-message policy beats the agent policy', async () => {
    const steering = new MessageQueue();
    const all = await run([threeCalls, { text: 'ok' }], [steeringTool(steering, 'urgent', 'skip'), addTool], { steering, toolExecution: 'sequential', steeringPolicy: 'wait' });
    expect(resultTexts(all).slice(1)).toEqual(['Skipped due to queued user message.', 'Skipped due to queued user message.']);
  });

  it('batched(2): steering is checked between batches', async () => {
    const steering = new MessageQueue();
    const four = { toolCalls: [...threeCalls.toolCalls, { name: 'add', arguments: { a: 3, b: 3 } }] };
    const all = await run([four, { text: 'ok' }], [steeringTool(steering, 'x'), addTool], { steering, toolExecution: { batched: 2 }, steeringPolicy: 'skip' });
    expect(resultTexts(all)).toEqual(['steered', '2', 'Skipped due to queued user message.', 'Skipped due to queued user message.']);
  });

  it('interrupt cancels a running tool as soon as steering arrives (virtual time)', () => {
    testScheduler().run(({ cold, flush }) => {
      const steering = new MessageQueue();
      let signal: AbortSignal | undefined;
      const slow: AnyTool = {
        ...addTool,
        name: 'slow',
        execute: (_a, ctx) => {
          signal = ctx.signal;
          return cold('100ms (r|)', { r: { content: [{ type: 'text' as const, text: 'finished' }] } });
        },
      };
      const all: AgentEvent[] = [];
      agentLoop([userMessage('hi', 0)], context([slow]), config([{ toolCalls: [{ name: 'slow', arguments: { a: 1, b: 1 } }] }, { text: 'ok' }], { steering, steeringPolicy: 'interrupt' })).subscribe((e) => all.push(e));
      cold('10ms a').subscribe(() => steering.push(userMessage('stop that', 0)));
      flush();
      expect(resultTexts(all)).toEqual(['tool call cancelled: user requested steering interrupt']);
      expect(signal?.aborted).toBe(true);
      const end = all.find((e) => e.type === 'ToolExecutionEnd')!;
      expect(end.timestamp).toBe(10);
      expect(userTexts(all)).toEqual(['hi', 'stop that']);
    });
  });

  it('steering queued before the run joins the first turn', async () => {
    const steering = new MessageQueue();
    steering.push(userMessage('also this', 0));
    const cfg = config([{ text: 'ok' }], { steering });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(userTexts(all)).toEqual(['hi', 'also this']);
    expect(cfg.provider.requests).toHaveLength(1);
  });

  it('follow-ups run only when the agent would otherwise stop; OneAtATime takes one per turn, All drains', async () => {
    for (const [mode, turns] of [['oneAtATime', 3], ['all', 2]] as const) {
      const followUp = new MessageQueue(mode);
      followUp.push(userMessage('f1', 0));
      followUp.push(userMessage('f2', 0));
      const all = await run([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { text: 'a' }, { text: 'b' }, { text: 'c' }].slice(0, turns + 1), [addTool], { followUp });
      expect(userTexts(all)).toEqual(['hi', 'f1', 'f2']);
      // The tool turn's results were answered before any follow-up entered.
      const roles = agentEnd(all).messages.map((m) => m.role);
      expect(roles.slice(0, 4)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
      expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(turns + 1);
    }
  });

  it('steering OneAtATime vs All', async () => {
    for (const [mode, expected] of [['oneAtATime', ['hi', 's1', 's2']], ['all', ['hi', 's1', 's2']]] as const) {
      const steering = new MessageQueue(mode);
      steering.push(userMessage('s1', 0));
      steering.push(userMessage('s2', 0));
      const script = mode === 'all' ? [{ text: 'one' }] : [{ text: 'one' }, { text: 'two' }];
      const all = await run(script, [], { steering });
      expect(userTexts(all)).toEqual(expected);
      expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(script.length);
    }
  });

  it('queues survive a hook that throws', async () => {
    const followUp = new MessageQueue();
    followUp.push(userMessage('kept', 0));
    const all = await run([{ text: 'a' }, { text: 'b' }], [], {
      followUp,
      hooks: {
        afterTurn: () => {
          throw new Error('hook failed');
        },
      },
    });
    expect(userTexts(all)).toEqual(['hi', 'kept']);
  });
});

describe('execution limits', () => {
  it('stops with "[Agent stopped: Max turns reached (2/2)]" and still emits AgentEnd', async () => {
    const loopForever = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }));
    const all = await run(loopForever, [addTool], { limits: { maxTurns: 2 } });
    const end = agentEnd(all);
    expect(end.stopReason).toBe('maxTurns');
    expect(textOf(end.messages.at(-1) as never)).toBe('[Agent stopped: Max turns reached (2/2)]');
    expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(2);
  });

  it('stops on total tokens and on cost', async () => {
    const script = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }], usage: { input: 600, output: 400 } }));
    const byTokens = agentEnd(await run(script, [addTool], { limits: { maxTotalTokens: 2000 } }));
    expect(textOf(byTokens.messages.at(-1) as never)).toBe('[Agent stopped: Max tokens reached (2000/2000)]');
    const priced = { ...config(script).model, cost: { input: 10, output: 10 } };
    const byCost = agentEnd(await run(script, [addTool], { model: priced, limits: { maxCost: 0.015 } }));
    expect(textOf(byCost.messages.at(-1) as never)).toMatch(/^\[Agent stopped: Max cost reached \(\$0\.0200\/\$0\.0150\)\]$/);
  });

  it('stops on duration, measured on the scheduler clock', () => {
    testScheduler().run(({ flush }) => {
      const script = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }], delay: 400 }));
      const all: AgentEvent[] = [];
      agentLoop([userMessage('hi', 0)], context([addTool]), config(script, { limits: { maxDurationMs: 1000 } })).subscribe((e) => all.push(e));
      flush();
      expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(3);
      expect(textOf(agentEnd(all).messages.at(-1) as never)).toBe('[Agent stopped: Max duration reached (1s/1s)]');
    });
  });
});

void Observable;
