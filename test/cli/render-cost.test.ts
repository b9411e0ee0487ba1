import { describe, expect, it } from 'vitest';
import { TerminalRenderer } from '../../src/cli/render.js';
import { Usage, type AgentEvent, type AssistantMessage, type ModelConfig } from '../../src/index.js';

const primary: ModelConfig = { id: 'gpt-4o', api: 'openai-completions', provider: 'openai', cost: { input: 2.5, output: 10 } };
const backup: ModelConfig = { id: 'claude-sonnet-4-5', api: 'anthropic-messages', provider: 'anthropic', cost: { input: 3, output: 15 } };

function answer(model: ModelConfig, input: number, output: number): AssistantMessage {
  return {
    role: 'assistant', content: [{ type: 'text', text: 'ok' }], stopReason: 'stop', model: model.id, provider: model.provider,
    usage: { ...Usage.empty(), input, output }, timestamp: 0,
  };
}

function costLine(options: ConstructorParameters<typeof TerminalRenderer>[1], messages: AssistantMessage[]): string {
  let written = '';
  const renderer = new TerminalRenderer({ write: (text: string) => (written += text) }, options);
  const usage = messages.reduce((u, m) => Usage.combine(u, m.usage), Usage.empty());
  const end: AgentEvent = { type: 'AgentEnd', loopId: 'L1', messages, usage, stopReason: 'stop', timestamp: 0 };
  renderer.event(end);
  renderer.close();
  return written.trim();
}

describe('TerminalRenderer cost line', () => {
  // 1M input tokens at the primary's price and 1M output tokens at the backup's.
  const run = [answer(primary, 1_000_000, 0), answer(backup, 0, 1_000_000)];

  it('prices the whole usage at the model\'s price without a chain', () => {
    expect(costLine({ tty: false, model: primary }, run)).toMatch(/ · \$12\.5000$/); // 2.5 + 10
  });

  it('prices each answer by the model that wrote it with a fallback chain', () => {
    expect(costLine({ tty: false, model: primary, models: [primary, backup] }, run)).toMatch(/ · \$17\.5000$/); // 2.5 + 15
  });

  it('prints no cost when no model has a price', () => {
    const free = { ...primary, cost: undefined } as unknown as ModelConfig;
    expect(costLine({ tty: false, model: free }, run)).not.toContain('$');
  });
});
