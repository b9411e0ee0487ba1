// @mariozechner/pi-agent-core `agentLoop`, consumed with `for await`, over a stream function
// that emits pi-ai's assistant-message events (start, text_start/_delta/_end,
// toolcall_start/_delta/_end, done) as the workload's async generator hands each part over. Like
// phi-rx's message builder, it mutates one partial message in place and parses each tool call's
// arguments once, at toolcall_end.
import { agentLoop } from '@mariozechner/pi-agent-core';
import { Type, createAssistantMessageEventStream } from '@mariozechner/pi-ai';
import {
  PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, modelParts, newCounts, runAgents, toolOutput,
} from '../workload.mjs';

export const label = '@mariozechner/pi-agent-core agentLoop';

export const MODEL = {
  id: 'bench-model', name: 'Bench', api: 'bench', provider: 'bench', baseUrl: '', reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1_000_000, maxTokens: 100_000,
};

const LLM_ROLES = new Set(['user', 'assistant', 'toolResult']);

/** pi's messages as the model sees them: the LLM roles only. */
export const convertToLlm = (messages) => messages.filter((m) => LLM_ROLES.has(m.role));

export function run(workload) {
  const counts = newCounts();
  // The tool is defined once per process and shared by every run and agent, as a server would.
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const context = { systemPrompt: SYSTEM_PROMPT, messages: [], tools };
    const config = { model: MODEL, convertToLlm };
    const prompt = { role: 'user', content: PROMPT, timestamp: Date.now() };
    for await (const event of agentLoop([prompt], context, config, undefined, scriptedStream(workload))) count(counts, event);
  });
}

/** The counts of the run in progress; the tool below bumps `executed` in them. */
let current;

/** The tool, defined once per process and shared by every run and agent, as a server would. */
const LOOKUP = {
  name: TOOL_NAME,
  label: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters: Type.Object({ path: Type.String(), line: Type.Number() }),
  execute: async (_toolCallId, params) => {
    current.executed++;
    return { content: [{ type: 'text', text: toolOutput(params) }], details: {} };
  },
};

export function lookupTool(counts) {
  current = counts;
  return LOOKUP;
}

export function count(counts, event) {
  counts.events++;
  if (event.type === 'message_update') {
    const kind = event.assistantMessageEvent.type;
    if (kind === 'text_delta') counts.textDeltas++;
    else if (kind === 'toolcall_delta') counts.argDeltas++;
  } else if (event.type === 'tool_execution_end') counts.toolExecutions++;
  else if (event.type === 'message_end' && event.message.role === 'toolResult') counts.toolResults++;
}

/**
 * A StreamFn that plays the workload's turns, one per call, from the workload's async generator
 * (modelParts): each part is pushed to pi-ai's event stream as it arrives.
 */
export function scriptedStream(workload) {
  let turn = 0;
  let ids = 0;
  const nextId = () => `call_${++ids}`;
  return (model) => {
    const stream = createAssistantMessageEventStream();
    const partial = {
      role: 'assistant', content: [], api: model.api, provider: model.provider, model: model.id, stopReason: 'stop', timestamp: Date.now(),
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    };
    const parts = modelParts(workload, turn++, nextId);
    (async () => {
      stream.push({ type: 'start', partial });
      let text;
      let call;
      let json = '';
      const endCall = () => {
        if (!call) return;
        call.block.arguments = JSON.parse(json);
        stream.push({ type: 'toolcall_end', contentIndex: call.index, toolCall: call.block, partial });
        call = undefined;
      };
      for await (const part of parts) {
        if (part.type === 'textDelta') {
          if (!text) {
            text = { block: { type: 'text', text: '' } };
            text.index = partial.content.push(text.block) - 1;
            stream.push({ type: 'text_start', contentIndex: text.index, partial });
          }
          text.block.text += part.delta;
          stream.push({ type: 'text_delta', contentIndex: text.index, delta: part.delta, partial });
        } else if (part.type === 'toolStart') {
          if (text && !text.ended) {
            text.ended = true;
            stream.push({ type: 'text_end', contentIndex: text.index, content: text.block.text, partial });
          }
          endCall();
          const block = { type: 'toolCall', id: part.id, name: part.name, arguments: {} };
          call = { block, index: partial.content.push(block) - 1 };
          json = '';
          stream.push({ type: 'toolcall_start', contentIndex: call.index, partial });
        } else {
          json += part.delta;
          stream.push({ type: 'toolcall_delta', contentIndex: call.index, delta: part.delta, partial });
        }
      }
      if (text && !text.ended) stream.push({ type: 'text_end', contentIndex: text.index, content: text.block.text, partial });
      if (call) {
        endCall();
        partial.stopReason = 'toolUse';
      }
      stream.push({ type: 'done', reason: partial.stopReason, message: partial });
    })();
    return stream;
  };
}

/** A StreamFn's answer of `total` text deltas that stops after `at` of them until `wait()` resolves (bench/agent-memory.mjs). */
export function pausedStream(model, at, total, wait) {
  const stream = createAssistantMessageEventStream();
  const partial = {
    role: 'assistant', content: [], api: model.api, provider: model.provider, model: model.id, stopReason: 'stop', timestamp: Date.now(),
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  };
  (async () => {
    stream.push({ type: 'start', partial });
    const block = { type: 'text', text: '' };
    partial.content.push(block);
    stream.push({ type: 'text_start', contentIndex: 0, partial });
    for (let i = 0; i < total; i++) {
      if (i === at) await wait();
      await undefined;
      block.text += 'abcd';
      stream.push({ type: 'text_delta', contentIndex: 0, delta: 'abcd', partial });
    }
    stream.push({ type: 'text_end', contentIndex: 0, content: block.text, partial });
    stream.push({ type: 'done', reason: 'stop', message: partial });
  })();
  return stream;
}
