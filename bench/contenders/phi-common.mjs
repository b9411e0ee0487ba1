// What the phi-rx contenders share: the bundled sources, the scripted turns, the tool, and a
// consumer that counts what it is delivered.
import { pathToFileURL } from 'node:url';
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, hasTools, toolArgs, toolOutput, turnText } from '../workload.mjs';

/**
 * phi-rx's own sources, bundled by run.mjs (plain JS: no TypeScript loader in the measured process).
 * `PHI_RX_BUNDLE` points at another bundle (run.mjs's `--baseline`: an older build measured in the same run).
 */
export const phi = await import(
  process.env.PHI_RX_BUNDLE ? pathToFileURL(process.env.PHI_RX_BUNDLE).href : new URL('../../.tmp/bench/phi-rx.mjs', import.meta.url).href
);

/** The K scripted turns of one agent. */
export function script(workload) {
  const text = turnText(workload);
  const turns = [];
  for (let turn = 0; turn < workload.turns; turn++) {
    const step = { text };
    if (hasTools(workload, turn)) {
      step.toolCalls = [];
      for (let i = 0; i < workload.tools; i++) step.toolCalls.push({ name: TOOL_NAME, arguments: toolArgs(turn, i) });
    }
    turns.push(step);
  }
  return turns;
}

/**
 * A scripted provider whose every call starts on a microtask: the scripted provider itself is
 * synchronous, and a real model call never is. In `wide` this is what makes the agents run at
 * once (interleaved) rather than one after the other.
 */
export function provider(workload) {
  const scripted = phi.scriptedProvider(script(workload), { chunkSize: 4, argChunks: 3 });
  return (request, options) => scripted(request, options).pipe(phi.subscribeOn(phi.asapScheduler));
}

/** The counts of the run in progress; the tool below bumps `executed` in them. */
let current;

/**
 * The tool, defined once per process and shared by every run and agent, as a server would (its
 * zod schema is converted to JSON Schema once, not on every run); it counts into `counts`.
 */
const LOOKUP = phi.defineTool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters: phi.z.object({ path: phi.z.string(), line: phi.z.number() }),
  execute: (args) => {
    current.executed++;
    return toolOutput(args);
  },
});

export function lookupTool(counts) {
  current = counts;
  return LOOKUP;
}

export function context(tools) {
  return { systemPrompt: SYSTEM_PROMPT, messages: [], tools };
}

export function prompts() {
  return [phi.userMessage(PROMPT)];
}

/** Counts one phi-rx event. */
export function count(counts, event) {
  counts.events++;
  switch (event.type) {
    case 'MessageUpdate':
      if (event.delta.type === 'text') counts.textDeltas++;
      else if (event.delta.type === 'toolCall' && event.delta.delta !== '') counts.argDeltas++;
      return;
    case 'ToolExecutionEnd':
      counts.toolExecutions++;
      return;
    case 'MessageEnd':
      if (event.message.role === 'toolResult') counts.toolResults++;
      return;
  }
}

/** Subscribes and resolves when the run completes (rejects on error). */
export function consume(events$, counts) {
  return new Promise((resolve, reject) => {
    events$.subscribe({ next: (event) => count(counts, event), error: reject, complete: resolve });
  });
}
