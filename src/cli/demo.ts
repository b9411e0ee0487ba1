import { readFile } from 'node:fs/promises';
import { interval, map, take, concat, of, type Observable } from 'rxjs';
import { argsSchema } from '../tools/args-schema.js';
import { defineTool } from '../tools/define-tool.js';
import { scriptedProvider, type ScriptedProvider, type ScriptedTurn, type ScriptStep } from '../testing/scripted-provider.js';
import { ProviderError } from '../types/errors.js';
import { arrayOf, number, object, oneOf, optional, recordOf, runCheck, string, unknown } from '../types/json-check.js';
import { textOf, type ToolResultMessage } from '../types/message.js';
import { toolProgress, type ToolEmission } from '../types/tool.js';

/** A demo tool that counts words slowly, reporting progress, so the terminal shows a live tool call. */
export const countWordsTool = defineTool({
  name: 'count_words',
  description: 'Counts the words of a text',
  parameters: argsSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }),
  execute: ({ text }): Observable<ToolEmission | string> => {
    const words = text.split(/\s+/).filter(Boolean);
    const steps = Math.max(1, Math.min(words.length, 5));
    return concat(
      interval(150).pipe(take(steps), map((i) => toolProgress(`counted ${Math.round(((i + 1) / steps) * words.length)} of ${words.length} words`))),
      of(String(words.length)),
    );
  },
});

/** What the CLI runs when there is no model key: a scripted conversation around `count_words`. */
export function demoProvider(prompt: string): ScriptedProvider {
  const answer: ScriptStep = (request) => {
    const result = [...request.messages].reverse().find((m): m is ToolResultMessage => m.role === 'toolResult');
    return { text: `Your prompt has ${result ? textOf(result) : 'an unknown number of'} words.`, chunkDelay: 20, usage: { input: 60, output: 9 } };
  };
  return scriptedProvider([
    { text: 'No model key, so this is the scripted demo. Let me count the words of your prompt.', chunkDelay: 20, toolCalls: [{ name: 'count_words', arguments: { text: prompt } }], usage: { input: 40, output: 25 } },
    answer,
  ]);
}

/** A `--script` file: an array of turns, each as a ScriptedTurn spells it (an error as `{ kind, message }`). */
const ScriptFile = arrayOf(
  object(
    {
      text: optional(string),
      thinking: optional(string),
      toolCalls: optional(arrayOf(object({ name: string, arguments: optional(recordOf(unknown)), id: optional(string) }, 'strict'))),
      usage: optional(object({ input: optional(number), output: optional(number) }, 'strict')),
      error: optional(object({ kind: oneOf(['rateLimited', 'network', 'auth', 'api', 'contextOverflow', 'other'] as const), message: string }, 'strict')),
      delay: optional(number),
      chunkDelay: optional(number),
    },
    'strict',
  ),
);

/** A scripted provider from a JSON file of turns (`--script`): demos and tests of the CLI itself. */
export async function scriptFromFile(file: string): Promise<ScriptedProvider> {
  const checked = runCheck(ScriptFile, JSON.parse(await readFile(file, 'utf8')), 'turns');
  if (!checked.ok) throw new Error(`${file}: ${checked.message}`);
  return scriptedProvider(
    checked.value.map(({ error, ...turn }): ScriptedTurn => ({
      ...(turn as ScriptedTurn),
      ...(error ? { error: new ProviderError(error.kind, error.message) } : {}),
    })),
  );
}
