/**
 * The keyless set-up a docs code block can ask for with `// harness: name, …` (see test/docs/blocks.ts):
 * what a block stands for as "your model", "your agent" — here a scripted model that answers every call
 * with a short text, so that the block runs with no API key, no network and no server.
 */
import type { Observable } from 'rxjs';
import { BasicAgent, type AgentContext, type AgentEvent, type AgentLoopConfig, type Provider, type StreamEvent } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** Your model: a scripted one. */
export const model = scriptedModel();

/** Your provider: answers every request with `Done.`. */
export const provider: Provider = (request, options): Observable<StreamEvent> => scriptedProvider([{ text: 'Done.' }])(request, options);

/** Your loop config: the model and its provider. */
export const config: AgentLoopConfig = { model, provider };

/** Your context: no history, no tools. */
export const context: AgentContext = { systemPrompt: 'You are helpful.', messages: [], tools: [] };

/** Your agent, on that model. */
export const agent = new BasicAgent({ model, provider, systemPrompt: 'You are helpful.' });

/** Your UI: one line per event. */
export function render(event: AgentEvent): void {
  console.log(event.type);
}
