// What the phi-rx contenders share: the bundled sources, the scripted turns, the tool, and a
// consumer that counts what it is delivered.
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, hasTools, toolArgs, toolOutput, turnText } from '../workload.mjs';

/** phi-rx's own sources, bundled by run.mjs (plain JS: no TypeScript loader in the measured process). */
export const phi = await import(new URL('../../.tmp/bench/phi-rx.mjs', import.meta.url).href);

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

export function lookupTool(counts) {
  return phi.defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: phi.z.object({ path: phi.z.string(), line: phi.z.number() }),
    execute: (args) => {
      counts.executed++;
      return toolOutput(args);
    },
  });
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
