import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AgentError, agentLoop, BasicAgent, defineTool, textOf, userMessage, type AgentEvent, type AgentLoopConfig, type AnyTool,
} from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events, model } from '../agent/helpers.js';

/** Subscribes, and returns what was emitted before the error and the error itself. */
async function failure(prompts: unknown, tools: AnyTool[] = [addTool], extra: Record<string, unknown> = {}) {
  const cfg = config([{ text: 'should never be asked' }], extra as Partial<AgentLoopConfig>);
  const emitted: AgentEvent[] = [];
  const error = await new Promise<unknown>((resolve) => {
    agentLoop(prompts as never, context(tools), cfg).subscribe({ next: (e) => emitted.push(e), error: resolve, complete: () => resolve(undefined) });
  });
  return { error: error as AgentError, emitted, requests: cfg.provider.requests.length };
}

describe('prompts are validated before the model is called (issue 12)', () => {
  it.each([
    ['an object instead of an array', { role: 'user', content: 'hi' }, /^prompts: expected an array of messages \(or a string\), got object/],
    ['no prompts (undefined): a continuation is agentLoopContinue', undefined, /^prompts: expected an array of messages \(or a string\), got undefined: .*agentLoopContinue\(context, config\)/],
    ['null', null, /^prompts: expected an array of messages \(or a string\), got null/],
    ['an array of strings', ['hello', 'world'], /^prompts\[0\]: expected a message object, got the string "hello"/],
    ['a null entry', [userMessage('ok', 0), null], /^prompts\[1\]: expected a message object, got null/],
    ['an unknown role', [userMessage('ok', 0), { role: 'system', content: 'be nice' }], /^prompts\[1\]\.role: unknown role "system".*context\.systemPrompt/],
    ['a user message without content', [{ role: 'user', timestamp: 0 }], /^prompts\[0\]\.content: missing/],
    ['a user message with empty content', [{ role: 'user', content: [], timestamp: 0 }], /^prompts\[0\]\.content: empty/],
    ['an unknown content block', [{ role: 'user', content: [{ type: 'image_url', image_url: 'x' }] }], /^prompts\[0\]\.content\[0\]\.type: unknown content type "image_url"/],
    ['a text block without text', [{ role: 'user', content: [{ type: 'text', value: 'x' }] }], /^prompts\[0\]\.content\[0\]\.text: a text block needs a string text/],
    ['a tool result without toolCallId', [{ role: 'toolResult', toolName: 'add', content: [] }], /^prompts\[0\]\.toolCallId/],
    ['a non-numeric timestamp', [{ role: 'user', content: 'x', timestamp: 'now' }], /^prompts\[0\]\.timestamp: expected a number/],
  ])('%s → AgentError(InvalidPrompt) naming index and field; nothing emitted, provider never called', async (_what, prompts, message) => {
    const { error, emitted, requests } = await failure(prompts);
    expect(error).toBeInstanceOf(AgentError);
    expect(error.code).toBe('InvalidPrompt');
    expect(error.message).toMatch(message);
    expect(emitted).toEqual([]);
    expect(requests).toBe(0);
  });

  it('accepts one string as the prompt, and OpenAI-style string content, as documented conveniences', async () => {
    const cfg = config([{ text: 'a' }, { text: 'b' }]);
    const one = await events(agentLoop('just text', context([]), cfg));
    expect(agentEnd(one).messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'just text' }] });
    const two = await events(agentLoop([{ role: 'user', content: 'plain string' } as never], context([]), cfg));
    expect(agentEnd(two).messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'plain string' }], timestamp: expect.any(Number) });
    expect(cfg.provider.requests.map((r) => textOf(r.messages.at(-1) as never))).toEqual(['just text', 'plain string']);
  });

  it('BasicAgent.prompt delivers the same error and stays usable', async () => {
    const provider = scriptedProvider([{ text: 'fine' }]);
    const agent = new BasicAgent({ model, provider, retry: false });
    await expect(lastValueFrom(agent.prompt([null] as never).pipe(toArray()))).rejects.toThrow(/prompts\[0\]: expected a message object, got null/);
    expect(provider.requests).toHaveLength(0);
    expect(await agent.run('hello')).toBe('fine');
  });
});

describe('options are validated when the run starts (issue 12)', () => {
  it.each([
    [{ toolExecution: 'bogus' }, /^config\.toolExecution: expected "parallel", "sequential" or \{ batched: n \}.*got the string "bogus"/],
    [{ toolExecution: { batched: 0 } }, /^config\.toolExecution: .*got \{"batched":0\}/],
    [{ limits: { maxTurns: -1 } }, /^config\.limits\.maxTurns: expected a whole number ≥ 0, got the number -1/],
    [{ limits: { maxTotalTokens: Number.NaN } }, /^config\.limits\.maxTotalTokens: .*got the number NaN/],
    [{ limits: { maxDurationMs: -5 } }, /^config\.limits\.maxDurationMs: expected a finite number ≥ 0/],
    [{ limits: { maxCost: Number.POSITIVE_INFINITY } }, /^config\.limits\.maxCost: /],
    [{ steeringPolicy: 'later' }, /^config\.steeringPolicy: expected "wait", "skip", "interrupt", got the string "later"/],
    [{ toolTimeoutMs: -1 }, /^config\.toolTimeoutMs: /],
    [{ retry: { maxRetries: 1.5 } }, /^config\.retry\.maxRetries: /],
    [{ thinkingLevel: 'max' }, /^config\.thinkingLevel: /],
  ])('%j → AgentError(InvalidConfig) naming the field; provider never called', async (options, message) => {
    const { error, emitted, requests } = await failure([userMessage('hi', 0)], [addTool], options);
    expect(error).toBeInstanceOf(AgentError);
    expect(error.code).toBe('InvalidConfig');
    expect(error.message).toMatch(message);
    expect(emitted).toEqual([]);
    expect(requests).toBe(0);
  });
});

describe('tool definitions are checked when a run starts (issue 12)', () => {
  const handMade = (over: Partial<AnyTool>): AnyTool => ({ ...addTool, ...over }) as AnyTool;
  it.each([
    ['an invalid JSON Schema', handMade({ name: 'calc', parameters: { type: 'object', properties: { a: { $ref: '#/$defs/nope' } } } }), /context\.tools\[1\] "calc": parameters: .*unresolved \$ref "#\/\$defs\/nope"/],
    ['parameters that are not an object schema', handMade({ name: 'calc', parameters: { type: 'array' } }), /context\.tools\[1\] "calc": parameters must be an object schema/],
    ['a missing execute', handMade({ name: 'calc', execute: undefined as never }), /context\.tools\[1\] "calc": execute must be a function/],
    ['two tools with one name', defineTool({ name: 'add', description: 'again', parameters: { type: 'object' }, execute: () => 'x' }) as AnyTool, /context\.tools\[1\] "add": two tools are named "add" \(context\.tools\[0\] and context\.tools\[1\]\)/],
    ['a name providers refuse', handMade({ name: 'has space' }), /context\.tools\[1\] "has space": name must be/],
  ])('%s → AgentError(InvalidTool) naming the tool; provider never called', async (_what, bad, message) => {
    const { error, emitted, requests } = await failure([userMessage('hi', 0)], [addTool, bad]);
    expect(error).toBeInstanceOf(AgentError);
    expect(error.code).toBe('InvalidTool');
    expect(error.message).toMatch(message);
    expect(emitted).toEqual([]);
    expect(requests).toBe(0);
  });
});
