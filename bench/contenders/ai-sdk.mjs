// The Vercel AI SDK (`ai`) `streamText` with a tool and a step limit (stopWhen: stepCountIs(K)),
// over its own mock language model (MockLanguageModelV3 from `ai/test`) whose stream parts are
// served from memory with no delay (convertArrayToReadableStream). The consumer reads
// `fullStream`.
import { stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, argPieces, hasTools, newCounts, runAgents, toolArgs, toolOutput, turnText } from '../workload.mjs';

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
 * The model plays one turn per call. Tool results are counted where the AI SDK delivers them:
 * in the prompt of the next model call (the tool message that answers the previous turn).
 */
function mockModel(workload, counts) {
  let turn = 0;
  let ids = 0;
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') counts.toolResults += last.content.filter((p) => p.type === 'tool-result').length;
      const parts = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 'text-0' }];
      const all = turnText(workload);
      for (let i = 0; i < all.length; i += 4) parts.push({ type: 'text-delta', id: 'text-0', delta: all.slice(i, i + 4) });
      parts.push({ type: 'text-end', id: 'text-0' });
      const tools = hasTools(workload, turn);
      if (tools) {
        for (let t = 0; t < workload.tools; t++) {
          const id = `call_${++ids}`;
          const json = JSON.stringify(toolArgs(turn, t));
          parts.push({ type: 'tool-input-start', id, toolName: TOOL_NAME });
          for (const delta of argPieces(json)) parts.push({ type: 'tool-input-delta', id, delta });
          parts.push({ type: 'tool-input-end', id }, { type: 'tool-call', toolCallId: id, toolName: TOOL_NAME, input: json });
        }
      }
      turn++;
      parts.push({ type: 'finish', usage: USAGE, finishReason: tools ? { unified: 'tool-calls', raw: 'tool_use' } : { unified: 'stop', raw: 'end_turn' } });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}
