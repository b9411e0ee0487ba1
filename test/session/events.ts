/** Hand-built event sequences for the session tests (the real loop is not needed to test recording). */
import type { AgentEvent } from '../../src/types/events.js';
import type { AgentMessage, AssistantMessage } from '../../src/types/message.js';
import type { Usage } from '../../src/types/usage.js';

export const usage = (input: number, output: number): Usage => ({
  input,
  output,
  reasoning: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
});

export const user = (text: string, timestamp = 0): AgentMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp });

export const assistant = (text: string, timestamp = 0, u = usage(10, 5)): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'stop',
  model: 'm',
  provider: 'p',
  usage: u,
  timestamp,
});

export interface LoopSpec {
  agentId?: string;
  sessionId: string;
  loopId: string;
  parentLoopId?: string;
  t: number;
  prompt?: string;
  answer?: string;
  usage?: Usage;
  rejection?: string;
  stopReason?: AssistantMessage['stopReason'];
  /** Run a tool in this loop; `childLoopId` marks a sub-agent spawn. */
  tool?: { toolCallId: string; toolName: string; childLoopId?: string };
  /** Streaming deltas of the answer. */
  deltas?: number;
}

/** The events of one complete loop, timestamps t, t+1, ... */
export function loopEvents(spec: LoopSpec): AgentEvent[] {
  const { sessionId, loopId, t } = spec;
  const u = spec.usage ?? usage(10, 5);
  const prompt = user(spec.prompt ?? `prompt of ${loopId}`, t);
  const answer = assistant(spec.answer ?? `answer of ${loopId}`, t + 3, u);
  const events: AgentEvent[] = [
    {
      type: 'AgentStart',
      agentId: spec.agentId ?? 'agent-1',
      sessionId,
      loopId,
      ...(spec.parentLoopId ? { parentLoopId: spec.parentLoopId, continuationKind: { kind: 'default' as const } } : {}),
      timestamp: t,
    },
  ];
  if (spec.rejection !== undefined) {
    events.push({ type: 'InputRejected', loopId, reason: spec.rejection, timestamp: t + 1 });
    events.push({ type: 'AgentEnd', loopId, messages: [], usage: usage(0, 0), timestamp: t + 2, stopReason: 'stop', rejection: spec.rejection });
    return events;
  }
  events.push({ type: 'TurnStart', loopId, turnIndex: 0, timestamp: t + 1, triggeredBy: 'user' });
  events.push({ type: 'MessageStart', loopId, message: prompt, timestamp: t + 1 });
  events.push({ type: 'MessageEnd', loopId, message: prompt, timestamp: t + 1 });
  events.push({ type: 'MessageStart', loopId, message: answer, timestamp: t + 2 });
  for (let i = 0; i < (spec.deltas ?? 2); i++) {
    events.push({ type: 'MessageUpdate', loopId, message: answer, delta: { type: 'text', contentIndex: 0, delta: `d${i}` }, timestamp: t + 2 });
  }
  events.push({ type: 'MessageEnd', loopId, message: answer, timestamp: t + 3 });
  const messages: AgentMessage[] = [prompt, answer];
  if (spec.tool) {
    const { toolCallId, toolName, childLoopId } = spec.tool;
    const result = { content: [{ type: 'text' as const, text: 'done' }], ...(childLoopId ? { childLoopId } : {}) };
    events.push({ type: 'ToolExecutionStart', loopId, toolCallId, toolName, args: {}, timestamp: t + 3 });
    events.push({ type: 'ToolExecutionUpdate', loopId, toolCallId, toolName, partialResult: { content: [{ type: 'text', text: '…' }] }, timestamp: t + 3 });
    events.push({
      type: 'ToolExecutionEnd',
      loopId,
      toolCallId,
      toolName,
      result,
      isError: false,
      ...(childLoopId ? { childLoopId } : {}),
      timestamp: t + 4,
    });
  }
  events.push({ type: 'TurnEnd', loopId, turnIndex: 0, message: answer, usage: u, timestamp: t + 5, toolResults: [] });
  events.push({ type: 'AgentEnd', loopId, messages, usage: u, timestamp: t + 6, stopReason: spec.stopReason ?? 'stop' });
  return events;
}
