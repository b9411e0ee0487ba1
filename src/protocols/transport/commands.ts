import { responseErrorText } from './wire.js';

/** A command for a running run, sent as JSON to its command channel. */
export type RunCommand =
  | { type: 'steer'; text: string }
  | { type: 'followUp'; text: string }
  | { type: 'abort' }
  /** Answers a call waiting for approval (`agent.approve`), by the id its ToolApprovalRequested event carried. */
  | { type: 'approve'; toolCallId: string; approved: boolean; args?: Record<string, unknown>; reason?: string }
  /** Cancels one tool call (`agent.cancelToolCall`), by the id its events carried. */
  | { type: 'cancelToolCall'; toolCallId: string; reason?: string };

export interface RunCommandsOptions {
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** The client side of a run's command channel (`POST {base}/runs/{id}/commands`). */
export interface RunCommands {
  steer(text: string): Promise<void>;
  followUp(text: string): Promise<void>;
  abort(): Promise<void>;
  approve(toolCallId: string, decision: { approved: boolean; args?: Record<string, unknown>; reason?: string }): Promise<void>;
  cancelToolCall(toolCallId: string, reason?: string): Promise<void>;
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
    approve: (toolCallId, decision) => send({ type: 'approve', toolCallId, ...decision }),
    cancelToolCall: (toolCallId, reason) => send({ type: 'cancelToolCall', toolCallId, ...(reason !== undefined ? { reason } : {}) }),
  };
}

/**
 * Validates a command received as JSON; returns it, or an error message naming the field.
 */
export function parseRunCommand(value: unknown): RunCommand | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the command must be a JSON object';
  const { type, text, toolCallId, approved, args, reason } = value as Record<string, unknown>;
  if (type === 'abort') return { type };
  if (type === 'steer' || type === 'followUp') {
    if (typeof text !== 'string' || text.trim() === '') return `command "${type}": field "text" must be a non-empty string`;
    return { type, text };
  }
  if (type === 'approve' || type === 'cancelToolCall') {
    if (typeof toolCallId !== 'string' || toolCallId === '') return `command "${type}": field "toolCallId" must be a non-empty string`;
    if (reason !== undefined && typeof reason !== 'string') return `command "${type}": field "reason" must be a string`;
    const why = reason === undefined ? {} : { reason };
    if (type === 'cancelToolCall') return { type, toolCallId, ...why };
    if (typeof approved !== 'boolean') return 'command "approve": field "approved" must be true or false';
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) return 'command "approve": field "args" must be an object';
    return { type, toolCallId, approved, ...(args === undefined ? {} : { args: args as Record<string, unknown> }), ...why };
  }
  return `field "type" must be "steer", "followUp", "abort", "approve" or "cancelToolCall", got ${JSON.stringify(type)}`;
}
