/**
 * Per-turn control: `prepareTurn` gives each model call its own tools and model (a planner that may
 * only search, then a writer on another provider that may only submit), and `stopWhen` ends the run
 * once the answer is submitted, without asking the model again. Scripted providers stand in for two
 * real APIs; with real ones, only the models change.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, toolCalled, toolCallsOf, turnCount, type AgentEvent, type AssistantMessage, type ModelConfig } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const search = defineTool({
  name: 'search', description: 'Searches the web', parameters: z.object({ q: z.string() }),
  execute: ({ q }) => `Top result for "${q}": the Eiffel Tower is 330 m tall.`,
});
const submit = defineTool({
  name: 'submit', description: 'Submits the final answer', parameters: z.object({ answer: z.string() }),
  execute: () => 'submitted',
});

/** Runs one prompt and returns what happened, one line each. */
export async function perTurnDemo(): Promise<string[]> {
  const planner = scriptedModel('planner-model');
  const writer: ModelConfig = { id: 'writer-model', api: 'scripted', provider: 'writer' };
  const writerApi = scriptedProvider([{ toolCalls: [{ name: 'submit', arguments: { answer: '330 m' } }] }]);
  const agent = new BasicAgent({
    model: planner,
    provider: scriptedProvider([{ toolCalls: [{ name: 'search', arguments: { q: 'Eiffel Tower height' } }] }]),
    tools: [search, submit],
    // Turn 0 plans with search only; every later turn is the writer's, which may only submit.
    prepareTurn: ({ turnIndex }) =>
      turnIndex === 0
        ? { activeTools: ['search'] }
        : { model: { model: writer, provider: writerApi }, activeTools: ['submit'] },
    stopWhen: [toolCalled('submit'), turnCount(5)],
  });
  const lines: string[] = [];
  const say = (e: AgentEvent): void => {
    if (e.type === 'MessageEnd' && e.message.role === 'assistant') {
      const m = e.message as AssistantMessage;
      lines.push(`${m.provider}/${m.model} › ${toolCallsOf(m).map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join(', ')}`);
    }
    if (e.type === 'AgentEnd') lines.push(`[done: ${e.stopReason}, stopped by ${e.stoppedBy?.kind === 'stopWhen' ? e.stoppedBy.condition : 'nothing'}]`);
  };
  await lastValueFrom(agent.prompt('How tall is the Eiffel Tower?').pipe(tap(say), toArray()));
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const line of await perTurnDemo()) console.log(line);
}
