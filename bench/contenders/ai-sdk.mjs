// The Vercel AI SDK (`ai`) `streamText` with a tool and a step limit (stopWhen: stepCountIs(K)),
// over its own mock language model (MockLanguageModelV3 from `ai/test`) whose stream parts are
// mapped from the workload's async generator as they arrive. The consumer reads `fullStream`.
import { stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, modelParts, newCounts, runAgents, toolOutput } from '../workload.mjs';

export const label = 'Vercel AI SDK streamText';

export function run(workload) {
  const counts = newCounts();
  // The tool is defined once per process and shared by every run and agent, as a server would.
  const tools = { [TOOL_NAME]: lookupTool(counts) };
  return runAgents(workload, counts, async () => {
    const result = streamText({
      model: mockModel(workload, counts),
      system: SYSTEM_PROMPT,
      prompt: PROMPT,
      tools,
      stopWhen: stepCountIs(workload.turns),
      maxRetries: 0,
    });
    for await (const part of result.fullStream) count(counts, part);
  });
}

/** The counts of the run in progress; the tool below bumps `executed` in them. */
let current;

/** The tool, defined once per process and shared by every run and agent, as a server would. */
const LOOKUP = tool({
  description: TOOL_DESCRIPTION,
  inputSchema: z.object({ path: z.string(), line: z.number() }),
  execute: async (args) => {
    current.executed++;
    return toolOutput(args);
  },
});

function lookupTool(counts) {
  current = counts;
  return LOOKUP;
}

function count(counts, part) {
  counts.events++;
  if (part.type === 'text-delta') counts.textDeltas++;
  else if (part.type === 'tool-input-delta') counts.argDeltas++;
  else if (part.type === 'tool-result') counts.toolExecutions++;
  else if (part.type === 'error') throw part.error;
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/**
 * The model plays one turn per call, its parts mapped from the workload's async generator
 * (modelParts) as they arrive. Tool results are counted where the AI SDK delivers them: in the
 * prompt of the next model call (the tool message that answers the previous turn).
 */
function mockModel(workload, counts) {
  let turn = 0;
  let ids = 0;
  const nextId = () => `call_${++ids}`;
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') counts.toolResults += last.content.filter((p) => p.type === 'tool-result').length;
      return { stream: ReadableStream.from(sdkParts(modelParts(workload, turn++, nextId))) };
    },
  });
}

async function* sdkParts(parts) {
  yield { type: 'stream-start', warnings: [] };
  let textOpen = false;
  let call;
  const endCall = function* () {
    if (!call) return;
    yield { type: 'tool-input-end', id: call.id };
    yield { type: 'tool-call', toolCallId: call.id, toolName: TOOL_NAME, input: call.json };
  };
  let tools = false;
  for await (const part of parts) {
    if (part.type === 'textDelta') {
      if (!textOpen) {
        textOpen = true;
        yield { type: 'text-start', id: 'text-0' };
      }
      yield { type: 'text-delta', id: 'text-0', delta: part.delta };
    } else if (part.type === 'toolStart') {
      if (textOpen) {
        textOpen = false;
        yield { type: 'text-end', id: 'text-0' };
      }
      yield* endCall();
      tools = true;
      call = { id: part.id, json: '' };
      yield { type: 'tool-input-start', id: part.id, toolName: part.name };
    } else {
      call.json += part.delta;
      yield { type: 'tool-input-delta', id: part.id, delta: part.delta };
    }
  }
  if (textOpen) yield { type: 'text-end', id: 'text-0' };
  yield* endCall();
  yield { type: 'finish', usage: USAGE, finishReason: tools ? { unified: 'tool-calls', raw: 'tool_use' } : { unified: 'stop', raw: 'end_turn' } };
}
