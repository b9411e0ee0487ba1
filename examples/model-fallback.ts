/**
 * A model fallback chain: the primary answers 503 until its retries are spent, the backup takes
 * the turn (and the rest of the run), the next prompt starts with the primary again. Scripted
 * providers stand in for two real APIs; with real ones, `models: [gpt, claude]` is all it takes.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { BasicAgent, ProviderError, textOf, type AgentEvent, type AssistantMessage, type ModelConfig } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** Runs two prompts and returns what happened, one line each. */
export async function fallbackDemo(): Promise<string[]> {
  const primary = scriptedModel('primary-model');
  const backup: ModelConfig = { id: 'backup-model', api: 'scripted', provider: 'backup' };
  const unavailable = { error: ProviderError.network('HTTP 503: Service Unavailable') };
  const agent = new BasicAgent({
    model: primary,
    provider: scriptedProvider([unavailable, unavailable, { text: 'The primary is back.' }]),
    models: [primary, { model: backup, provider: scriptedProvider([{ text: 'Paris, from the backup.' }]) }],
    retry: { maxRetries: 1, initialDelayMs: 5, jitter: 0 },
  });
  const lines: string[] = [];
  const say = (e: AgentEvent): void => {
    if (e.type === 'RetryScheduled') lines.push(`retry ${e.attempt} in ${e.delayMs} ms (${e.errorKind})`);
    if (e.type === 'ModelFallback') lines.push(`fallback: ${e.from.provider}/${e.from.id} → ${e.to.provider}/${e.to.id} (${e.reason}: ${e.errorMessage})`);
    if (e.type === 'MessageEnd' && e.message.role === 'assistant') {
      const m = e.message as AssistantMessage;
      lines.push(`${m.provider}/${m.model} › ${textOf(m)}`);
    }
  };
  await lastValueFrom(agent.prompt('Capital of France?').pipe(tap(say), toArray()));
  await lastValueFrom(agent.prompt('And now?').pipe(tap(say), toArray()));
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const line of await fallbackDemo()) console.log(line);
}
