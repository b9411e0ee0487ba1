// @mariozechner/pi-agent-core `agentLoop`, consumed with `for await`, over a stream function
// that emits pi-ai's assistant-message events (start, text_start/_delta/_end,
// toolcall_start/_delta/_end, done) with no latency. Like phi-rx's message builder, it mutates
// one partial message in place and parses each tool call's arguments once, at toolcall_end.
import { agentLoop } from '@mariozechner/pi-agent-core';
import { Type, createAssistantMessageEventStream } from '@mariozechner/pi-ai';
import {
  PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, argPieces, hasTools, newCounts, runAgents, toolArgs, toolOutput, turnText,
} from '../workload.mjs';

export const label = '@mariozechner/pi-agent-core agentLoop';

const MODEL = {
  id: 'bench-model', name: 'Bench', api: 'bench', provider: 'bench', baseUrl: '', reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1_000_000, maxTokens: 100_000,
};

const LLM_ROLES = new Set(['user', 'assistant', 'toolResult']);

export function run(workload) {
  const counts = newCounts();
  // The tool is defined once per process and shared by every run and agent, as a server would.
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const context = { systemPrompt: SYSTEM_PROMPT, messages: [], tools };
    const config = { model: MODEL, convertToLlm: (messages) => messages.filter((m) => LLM_ROLES.has(m.role)) };
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

function lookupTool(counts) {
  current = counts;
  return LOOKUP;
}

function count(counts, event) {
  counts.events++;
  if (event.type === 'message_update') {
    const kind = event.assistantMessageEvent.type;
    if (kind === 'text_delta') counts.textDeltas++;
    else if (kind === 'toolcall_delta') counts.argDeltas++;
  } else if (event.type === 'tool_execution_end') counts.toolExecutions++;
  else if (event.type === 'message_end' && event.message.role === 'toolResult') counts.toolResults++;
}

/** A StreamFn that plays the workload's turns, one per call. */
function scriptedStream(workload) {
  let turn = 0;
  let ids = 0;
  return (model) => {
    const stream = createAssistantMessageEventStream();
    const partial = {
      role: 'assistant', content: [], api: model.api, provider: model.provider, model: model.id, stopReason: 'stop', timestamp: Date.now(),
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    };
    stream.push({ type: 'start', partial });
    const text = { type: 'text', text: '' };
    const textIndex = partial.content.push(text) - 1;
    stream.push({ type: 'text_start', contentIndex: textIndex, partial });
    const all = turnText(workload);
    for (let i = 0; i < all.length; i += 4) {
      const delta = all.slice(i, i + 4);
      text.text += delta;
      stream.push({ type: 'text_delta', contentIndex: textIndex, delta, partial });
    }
    stream.push({ type: 'text_end', contentIndex: textIndex, content: text.text, partial });
    if (hasTools(workload, turn)) {
      for (let t = 0; t < workload.tools; t++) {
        const call = { type: 'toolCall', id: `call_${++ids}`, name: TOOL_NAME, arguments: {} };
        const index = partial.content.push(call) - 1;
        stream.push({ type: 'toolcall_start', contentIndex: index, partial });
        let json = '';
        for (const delta of argPieces(JSON.stringify(toolArgs(turn, t)))) {
          json += delta;
          stream.push({ type: 'toolcall_delta', contentIndex: index, delta, partial });
        }
        call.arguments = JSON.parse(json);
        stream.push({ type: 'toolcall_end', contentIndex: index, toolCall: call, partial });
      }
      partial.stopReason = 'toolUse';
    }
    turn++;
    stream.push({ type: 'done', reason: partial.stopReason, message: partial });
    return stream;
  };
}
