import type { AgentEvent } from '../../src/types/events.js';
import { emptyAssistant, type AssistantMessage, userMessage } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

export const loopId = 's.cfg.1';

/** A run's events built by hand: prompt, a streamed reply with a tool call, the tool with progress, the end. */
export function runEvents() {
  const prompt = userMessage('Weather?', 0);
  const live = emptyAssistant('m', 'p', 1); // the live partial the loop mutates
  const final: AssistantMessage = {
    ...emptyAssistant('m', 'p', 1),
    content: [{ type: 'text', text: 'Hello' }, { type: 'toolCall', id: 'c1', name: 'weather', arguments: { city: 'Paris' } }],
    stopReason: 'toolUse',
  };
  const usage = { ...Usage.empty(), input: 10, output: 5, totalTokens: 15 };
  const ev: Record<string, AgentEvent> = {
    A: { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId, timestamp: 0 },
    P: { type: 'MessageStart', loopId, message: prompt, timestamp: 0 },
    p: { type: 'MessageEnd', loopId, message: prompt, timestamp: 0 },
    T: { type: 'TurnStart', loopId, turnIndex: 0, timestamp: 0, triggeredBy: 'user' },
    M: { type: 'MessageStart', loopId, message: live, timestamp: 1 },
    u: { type: 'MessageUpdate', loopId, message: live, delta: { type: 'text', contentIndex: 0, delta: 'Hel' }, timestamp: 1 },
    v: { type: 'MessageUpdate', loopId, message: live, delta: { type: 'text', contentIndex: 0, delta: 'lo' }, timestamp: 1 },
    c: { type: 'MessageUpdate', loopId, message: live, delta: { type: 'toolCall', contentIndex: 1, delta: '', id: 'c1', name: 'weather' }, timestamp: 1 },
    d: { type: 'MessageUpdate', loopId, message: live, delta: { type: 'toolCall', contentIndex: 1, delta: '{"city":"Paris"}' }, timestamp: 1 },
    m: { type: 'MessageEnd', loopId, message: final, timestamp: 2 },
    X: { type: 'ToolExecutionStart', loopId, toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' }, timestamp: 3 },
    g: { type: 'ProgressMessage', loopId, toolCallId: 'c1', toolName: 'weather', text: 'asking', timestamp: 3 },
    x: { type: 'ToolExecutionEnd', loopId, toolCallId: 'c1', toolName: 'weather', result: { content: [{ type: 'text', text: '18°C' }] }, isError: false, timestamp: 4 },
    t: { type: 'TurnEnd', loopId, turnIndex: 0, message: final, usage, timestamp: 4, toolResults: [] },
    Z: { type: 'AgentEnd', loopId, messages: [prompt, final], usage, timestamp: 5, stopReason: 'stop' },
  };
  return { ev, prompt, final, usage, live };
}
