import { responseErrorText } from './wire.js';

/** A command for a running run, sent as JSON to its command channel. */
export type RunCommand = { type: 'steer'; text: string } | { type: 'followUp'; text: string } | { type: 'abort' };

export interface RunCommandsOptions {
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** The client side of a run's command channel (`POST {base}/runs/{id}/commands`). */
export interface RunCommands {
  steer(text: string): Promise<void>;
  followUp(text: string): Promise<void>;
  abort(): Promise<void>;
  send(command: RunCommand): Promise<void>;
}

/**
 * Steers, follows up or aborts a run served by `phi-rx/transport/node`, from a page or any
 * client. Each call POSTs one command and resolves once the server accepted it; a refusal
 * (unknown run, run already over, bad command) rejects with the server's message.
 *
 * @example
 * const commands = runCommands(`/agent/runs/${runId}/commands`);
 * await commands.steer('Use metric units');
 * await commands.abort();
 */
export function runCommands(url: string | URL, options: RunCommandsOptions = {}): RunCommands {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const send = async (command: RunCommand): Promise<void> => {
    const response = await fetchImpl(String(url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body: JSON.stringify(command),
    });
    if (!response.ok) {
      const message = await responseErrorText(response);
      throw new Error(`${command.type} command to ${String(url)} refused: HTTP ${response.status}${message ? `: ${message}` : ''}`);
    }
    await response.body?.cancel();
  };
  return {
    send,
    steer: (text) => send({ type: 'steer', text }),
    followUp: (text) => send({ type: 'followUp', text }),
    abort: () => send({ type: 'abort' }),
  };
}

/**
 * Validates a command received as JSON; returns it, or an error message naming the field.
 */
export function parseRunCommand(value: unknown): RunCommand | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the command must be a JSON object';
  const { type, text } = value as { type?: unknown; text?: unknown };
  if (type === 'abort') return { type };
  if (type === 'steer' || type === 'followUp') {
    if (typeof text !== 'string' || text.trim() === '') return `command "${type}": field "text" must be a non-empty string`;
    return { type, text };
  }
  return `field "type" must be "steer", "followUp" or "abort", got ${JSON.stringify(type)}`;
}
