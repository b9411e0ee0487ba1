import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, BasicAgent, Evaluation, ProviderError, subAgentTool, userMessage, type AgentEvent } from '../../../src/index.js';
import { traceAgent } from '../../../src/integrations/otel/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { addTool, config, context, testScheduler } from '../../agent/helpers.js';
import { idOf, ms, otelHarness, parentOf, tree } from './helpers.js';

let harness: ReturnType<typeof otelHarness> | undefined;
const open = (options: Parameters<typeof otelHarness>[0] = {}): ReturnType<typeof otelHarness> => (harness = otelHarness(options));
afterEach(async () => {
  await harness?.shutdown();
  harness = undefined;
});

const addThenAnswer = () => [
  { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 }, id: 'call-1' }], delay: 5, usage: { input: 12, output: 3 } },
  { text: 'It is 3.', delay: 7, usage: { input: 20, output: 4 } },
];

describe('traceAgent', () => {
  it('passes every event on unchanged and records invoke_agent ⊃ chat, execute_tool at the events’ virtual times', () => {
    const h = open({ agentName: 'calc' });
    testScheduler().run(({ expectObservable }) => {
      const traced$ = agentLoop([userMessage('1+2?', 0)], context([addTool]), config(addThenAnswer())).pipe(traceAgent(h.tracing));
      const plain$ = agentLoop([userMessage('1+2?', 0)], context([addTool]), config(addThenAnswer()));
      expectObservable(traced$).toEqual(plain$);
    });
    expect(tree(h.spans())).toEqual(['invoke_agent calc', '  chat scripted-model', '  execute_tool add', '  chat scripted-model']);
    const agent = h.one('invoke_agent calc');
    expect(agent.kind).toBe(SpanKind.INTERNAL);
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'calc', 'gen_ai.agent.id': 'agent-1', 'gen_ai.conversation.id': 'session-1',
      'gen_ai.usage.input_tokens': 32, 'gen_ai.usage.output_tokens': 7,
    });
    const [first, second] = h.named('chat scripted-model').sort((a, b) => ms(a.startTime) - ms(b.startTime));
    expect(first!.kind).toBe(SpanKind.CLIENT);
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'scripted-model', 'gen_ai.response.model': 'scripted-model',
      'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': ['tool_call'],
    });
    expect(second!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 20, 'gen_ai.response.finish_reasons': ['stop'] });
    expect(ms(first!.startTime)).toBe(0);
    expect(ms(first!.endTime)).toBeGreaterThanOrEqual(5); // the provider's 5 virtual ms before its first event
    expect(ms(second!.endTime) - ms(second!.startTime)).toBeGreaterThanOrEqual(7);
    const tool = h.one('execute_tool add');
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gen_ai.tool.call.id': 'call-1' });
    expect(ms(tool.startTime)).toBeGreaterThanOrEqual(ms(first!.endTime));
    expect(ms(second!.startTime)).toBeGreaterThanOrEqual(ms(tool.endTime));
    for (const span of h.spans()) expect(span.status.code, span.name).not.toBe(SpanStatusCode.ERROR);
    // Content is opt-in.
    for (const span of h.spans()) {
      expect(Object.keys(span.attributes).filter((k) => /messages|arguments|result/.test(k)), span.name).toEqual([]);
    }
  });

  it('records message content only when asked to', async () => {
    const h = open({ captureContent: true });
    await lastValueFrom(agentLoop([userMessage('1+2?', 0)], context([addTool]), config(addThenAnswer())).pipe(traceAgent(h.tracing), toArray()));
    expect(h.one('execute_tool add').attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"a":1,"b":2}', 'gen_ai.tool.call.result': '[{"type":"text","text":"3"}]' });
    const last = h.named('chat scripted-model').sort((a, b) => ms(b.startTime) - ms(a.startTime))[0]!;
    expect(JSON.parse(String(last.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', text: 'It is 3.' }] }]);
  });

  it('makes each retry its own chat span: the failed attempt with error.type, the next one starting after the delay', () => {
    const h = open();
    testScheduler().run(({ flush }) => {
      const script = [{ error: new ProviderError('rateLimited', 'slow down'), delay: 4 }, { error: new ProviderError('network', 'reset'), delay: 2 }, { text: 'ok', delay: 3 }];
      agentLoop([userMessage('hi', 0)], context(), config(script, { retry: { maxRetries: 3, initialDelayMs: 100, backoffMultiplier: 2, jitter: 0 } })).pipe(traceAgent(h.tracing)).subscribe();
      flush();
    });
    const chats = h.spans().filter((s) => s.name.startsWith('chat')).sort((a, b) => ms(a.startTime) - ms(b.startTime));
    expect(chats.map((s) => [s.name, s.attributes['error.type'], s.attributes['phi_rx.retry.attempt'], ms(s.startTime), ms(s.endTime)])).toEqual([
      ['chat scripted-model', 'rateLimited', 0, 0, 4],
      ['chat scripted-model', 'network', 1, 104, 106],
      ['chat scripted-model', undefined, 2, 306, 309],
    ]);
    expect(chats[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'slow down' });
    // The attempts that failed before any output (429, a reset) name the model they went to, as every chat span does.
    for (const failed of chats.slice(0, 2)) expect(failed.attributes).toMatchObject({ 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'scripted-model' });
    const agent = h.one('invoke_agent');
    for (const chat of chats) expect(parentOf(chat)).toBe(idOf(agent));
    expect(agent.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('a failed attempt in a later turn is named after the model the loop has been calling', async () => {
    const h = open();
    const script = [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { error: new ProviderError('network', 'reset') }, { text: '2' }];
    await lastValueFrom(agentLoop([userMessage('1+1', 0)], context([addTool]), config(script, { retry: { maxRetries: 1, initialDelayMs: 1, jitter: 0 } })).pipe(traceAgent(h.tracing), toArray()));
    const failed = h.spans().find((s) => s.attributes['error.type'] === 'network')!;
    expect(failed.name).toBe('chat scripted-model');
    expect(failed.attributes).toMatchObject({ 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'scripted-model', 'phi_rx.retry.attempt': 0 });
    expect(h.named('chat scripted-model')).toHaveLength(3);
  });

  it('a model fallback ends the given-up model\'s attempt as a failed chat span and notes the fallback on invoke_agent', () => {
    const h = open();
    const backup = { id: 'backup-model', api: 'scripted', provider: 'backup' } as const;
    testScheduler().run(({ flush }) => {
      const primary = [{ error: new ProviderError('network', 'HTTP 503'), delay: 4 }];
      const fallback = scriptedProvider([{ text: 'ok', delay: 3 }]);
      const base = config(primary, { retry: false });
      agentLoop([userMessage('hi', 0)], context(), { ...base, models: [base.model, { model: backup, provider: fallback }] }).pipe(traceAgent(h.tracing)).subscribe();
      flush();
    });
    const chats = h.spans().filter((s) => s.name.startsWith('chat')).sort((a, b) => ms(a.startTime) - ms(b.startTime));
    expect(chats.map((s) => [s.name, s.attributes['gen_ai.provider.name'], s.attributes['error.type'], ms(s.startTime), ms(s.endTime)])).toEqual([
      ['chat scripted-model', 'scripted', 'network', 0, 4],
      ['chat backup-model', 'backup', undefined, 4, 7],
    ]);
    expect(chats[0]!.attributes['phi_rx.fallback.reason']).toBe('retriesExhausted');
    const agent = h.one('invoke_agent');
    expect(agent.events.map((e) => [e.name, e.attributes])).toEqual([
      ['phi_rx.model_fallback', { 'phi_rx.fallback.from': 'scripted/scripted-model', 'phi_rx.fallback.to': 'backup/backup-model', 'phi_rx.fallback.reason': 'retriesExhausted' }],
    ]);
    expect(agent.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('a failed run marks its chat and invoke_agent spans with error.type', async () => {
    const h = open();
    await lastValueFrom(agentLoop([userMessage('hi', 0)], context(), config([{ error: new ProviderError('auth', 'bad key') }])).pipe(traceAgent(h.tracing), toArray()));
    expect(h.one('chat scripted-model').attributes).toMatchObject({ 'error.type': 'auth' });
    expect(h.one('chat scripted-model').status.code).toBe(SpanStatusCode.ERROR);
    expect(h.one('invoke_agent').attributes).toMatchObject({ 'error.type': 'auth', 'phi_rx.stop_reason': 'error' });
  });

  it('a subscriber that leaves mid-run ends the open spans as cancelled', () => {
    const h = open();
    testScheduler().run(({ cold, flush }) => {
      const sub = agentLoop([userMessage('hi', 0)], context(), config([{ text: 'a long answer', delay: 50 }])).pipe(traceAgent(h.tracing)).subscribe();
      cold('10ms a').subscribe(() => sub.unsubscribe());
      flush();
    });
    const agent = h.one('invoke_agent');
    expect(agent.attributes['error.type']).toBe('cancelled');
    expect(agent.ended).toBe(true);
    expect(ms(agent.endTime)).toBe(0); // the time of the last event seen
  });

  it('a parallel run left mid-way ends its group span and every branch as cancelled', () => {
    const h = open();
    testScheduler().run(({ cold, flush }) => {
      const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]), tracing: h.tracing });
      const slow = (text: string) => scriptedProvider([{ text, delay: 50 }]);
      const sub = agent.promptParallel('go', [{ provider: slow('a'), configId: 'a' }, { provider: slow('b'), configId: 'b' }], Evaluation.PickFirst).subscribe();
      cold('10ms x').subscribe(() => sub.unsubscribe());
      flush();
    });
    const group = h.spans().find((s) => s.attributes['phi_rx.parallel.branches'] === 2)!;
    expect(group.attributes['error.type']).toBe('cancelled');
    const branches = h.spans().filter((s) => s.attributes['phi_rx.parallel.branch_index'] !== undefined);
    expect(branches).toHaveLength(2);
    for (const branch of branches) expect(branch.attributes['error.type']).toBe('cancelled');
  });

  it('records gen_ai.client.token.usage and gen_ai.client.operation.duration per model call', async () => {
    const h = open();
    await lastValueFrom(agentLoop([userMessage('1+2?', 0)], context([addTool]), config(addThenAnswer())).pipe(traceAgent(h.tracing), toArray()));
    const metrics = await h.histograms();
    const usage = metrics.get('gen_ai.client.token.usage')!;
    expect(usage.descriptor.unit).toBe('{token}');
    const byType = Object.fromEntries(usage.dataPoints.map((p) => [p.attributes['gen_ai.token.type'], [p.value.count, p.value.sum]]));
    expect(byType).toEqual({ input: [2, 32], output: [2, 7] });
    expect(usage.dataPoints[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'scripted-model' });
    const duration = metrics.get('gen_ai.client.operation.duration')!;
    expect(duration.descriptor.unit).toBe('s');
    expect(duration.dataPoints.reduce((n, p) => n + p.value.count, 0)).toBe(2);
  });
});

describe('tracing through sub-agents and parallel branches', () => {
  it('nests a sub-agent run under the tool call that started it, also with two sub-agents running at once', () => {
    const h = open({ agentName: 'lead' });
    const child = (name: string, answer: string, delay: number) =>
      subAgentTool({
        name,
        model: scriptedModel('child-model'),
        provider: scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }], delay }, { text: answer, delay }]),
        tools: [addTool],
        config: { retry: false, operators: { events: h.tracing.trace() } },
      });
    testScheduler().run(({ flush }) => {
      const agent = new BasicAgent({
        model: scriptedModel(),
        provider: scriptedProvider([
          { toolCalls: [{ name: 'research', arguments: { task: 'a' }, id: 'r' }, { name: 'add', arguments: { a: 1, b: 1 }, id: 'x' }, { name: 'review', arguments: { task: 'b' }, id: 'v' }], delay: 1 },
          { text: 'Done.', delay: 1 },
        ]),
        tools: [child('research', 'found 42', 3), addTool, child('review', 'looks fine', 5)],
        retry: false,
        toolExecution: 'parallel',
        tracing: h.tracing,
      });
      agent.prompt('delegate').subscribe();
      flush();
    });
    expect(tree(h.spans())).toEqual([
      'invoke_agent lead',
      '  chat scripted-model',
      '  execute_tool add',
      '  execute_tool research',
      '    invoke_agent research',
      '      chat child-model',
      '      execute_tool add',
      '      chat child-model',
      '  execute_tool review',
      '    invoke_agent review',
      '      chat child-model',
      '      execute_tool add',
      '      chat child-model',
      '  chat scripted-model',
    ]);
    const research = h.one('execute_tool research');
    const review = h.one('execute_tool review');
    expect(ms(review.startTime)).toBeLessThan(ms(research.endTime)); // the two sub-agents overlap
    for (const tool of [research, review]) {
      const run = h.one(`invoke_agent ${String(tool.attributes['gen_ai.tool.name'])}`);
      expect(parentOf(run)).toBe(idOf(tool));
      expect(tool.attributes['phi_rx.child_loop_id']).toBe(run.attributes['phi_rx.loop_id']);
      expect(run.spanContext().traceId).toBe(h.one('invoke_agent lead').spanContext().traceId);
    }
  });

  it('puts the branches of a parallel run under one span, each with its own chat span', async () => {
    const h = open({ agentName: 'best-of-2' });
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]), tracing: h.tracing });
    const cheap = scriptedProvider([{ text: 'short', usage: { input: 10, output: 5 } }]);
    const verbose = scriptedProvider([{ text: 'a much longer answer', usage: { input: 10, output: 50 } }]);
    const events: AgentEvent[] = await lastValueFrom(
      agent.promptParallel('Summarize', [{ provider: verbose, configId: 'verbose' }, { provider: cheap, configId: 'cheap' }], Evaluation.TokenEfficient).pipe(toArray()),
    );
    expect(events.some((e) => e.type === 'ParallelLoopEnd')).toBe(true);
    const group = h.spans().find((s) => s.attributes['phi_rx.parallel.branches'] === 2)!;
    expect(group.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'phi_rx.parallel.selected_loop_id': `${agent.sessionId}.cheap.1`, 'phi_rx.parallel.selected_index': 1 });
    const branches = h.spans().filter((s) => s.attributes['phi_rx.parallel.branch_index'] !== undefined);
    expect(branches.map((b) => b.attributes['phi_rx.loop_id']).sort()).toEqual([`${agent.sessionId}.cheap.1`, `${agent.sessionId}.verbose.1`]);
    for (const branch of branches) {
      expect(parentOf(branch)).toBe(idOf(group));
      expect(h.spans().filter((s) => s.name.startsWith('chat') && parentOf(s) === idOf(branch))).toHaveLength(1);
    }
  });
});
