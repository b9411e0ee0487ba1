import { Observable } from 'rxjs';
import { messageChecks } from '../../types/message-checks.js';
import { runCheck } from '../../types/json-check.js';
import type { AgentMessage } from '../../types/message.js';
import type { SteeringPolicy } from '../../types/config.js';
import { checkStreamId, entriesOfXRead, type RedisCommander, type StreamEntry } from './commands.js';

/** What a web process sends back to the worker running an agent. */
export type RunControl =
  | { readonly kind: 'steer'; readonly message: string | AgentMessage; readonly policy?: SteeringPolicy }
  | { readonly kind: 'followUp'; readonly message: string | AgentMessage }
  | { readonly kind: 'abort'; readonly reason?: string }
  /** Answers a call waiting for approval (`agent.approve`), by the id its ToolApprovalRequested event carried. */
  | {
    readonly kind: 'approve'; readonly toolCallId: string; readonly approved: boolean;
    readonly args?: Record<string, unknown>; readonly reason?: string;
  }
  /** Cancels one tool call (`agent.cancelToolCall`), by the id its events carried. */
  | { readonly kind: 'cancelToolCall'; readonly toolCallId: string; readonly reason?: string };

/** A control message read back, with its stream id (to resume after, e.g. when another worker takes the run over). */
export interface StreamedControl {
  readonly id: string;
  readonly control: RunControl;
}

/** The part of BasicAgent a control stream drives (`approve` and `cancelToolCall` for those controls only). */
export interface ControllableAgent {
  steer(message: string | AgentMessage, policy?: SteeringPolicy): void;
  followUp(message: string | AgentMessage): void;
  abort(reason?: unknown): void;
  approve?(toolCallId: string, decision: { approved: boolean; args?: Record<string, unknown>; reason?: string }): unknown;
  cancelToolCall?(toolCallId: string, reason?: string): unknown;
}

/** The control stream of a run's event stream: `<streamKey>:control`. */
export const controlKeyOf = (streamKey: string): string => `${streamKey}:control`;

/** How long a control stream lives after its last control or its worker's last read: 6 hours. */
export const CONTROL_TTL_MS = 6 * 60 * 60 * 1000;

/**
 * Sends steering, a follow-up, an abort, an approval answer or a tool-call cancellation to the worker running the run on `streamKey` (an
 * `XADD` to `<streamKey>:control`, bounded to `maxLen` entries, which expires `ttlMs` after the last control
 * unless the worker's `readRunControl` keeps it alive). Resolves with the entry id.
 * Throws a TypeError naming the field when the control is malformed, before sending anything.
 *
 * @example
 * await sendRunControl(redis, `run:${runId}`, { kind: 'steer', message: 'Use metric units.' });
 */
export async function sendRunControl(client: RedisCommander, streamKey: string, control: RunControl, maxLen = 1000, ttlMs = CONTROL_TTL_MS): Promise<string> {
  const data = encodeRunControl(control, 'sendRunControl');
  const id = await client.sendCommand(['XADD', controlKeyOf(streamKey), 'MAXLEN', '~', String(maxLen), '*', 'data', data]);
  await client.sendCommand(['PEXPIRE', controlKeyOf(streamKey), String(ttlMs)]);
  return String(id);
}

/** A control checked and as JSON, as it is stored in the control stream; a TypeError naming the field when it is malformed. */
export function encodeRunControl(control: RunControl, where: string): string {
  return JSON.stringify(checkControl(control, where));
}

/**
 * The control messages sent to a run, read with `XREAD BLOCK` after `after` (default `'0'`: all of
 * them, so nothing sent before the worker listened is lost). Never completes: unsubscribe when
 * the run ends. A malformed entry errors the stream with a TypeError naming the entry and field.
 * While it reads, it keeps the control stream from expiring (`ttlMs`, default 6 hours: renewed
 * every minute or so). Holds its connection while blocked: give it one of its own.
 *
 * ```
 * control:  --s----a
 * readRunControl(reader, 'run:1')
 * result:   --s----a---
 * ```
 *
 * @example
 * const controls = readRunControl(reader, `run:${runId}`).subscribe(({ control }) => applyRunControl(agent, control));
 */
export function readRunControl(client: RedisCommander, streamKey: string, options: { after?: string; blockMs?: number; ttlMs?: number } = {}): Observable<StreamedControl> {
  const key = controlKeyOf(streamKey);
  const after = checkStreamId(options.after ?? '0', `readRunControl("${streamKey}") after`);
  const blockMs = String(options.blockMs ?? 1000);
  const ttlMs = options.ttlMs ?? CONTROL_TTL_MS;
  return new Observable<StreamedControl>((subscriber) => {
    let last = after;
    let refreshed = -Infinity;
    const loop = async (): Promise<void> => {
      while (!subscriber.closed) {
        // the run lives while its worker reads: keep its control stream from expiring (no-op while it has none)
        if (Date.now() - refreshed >= Math.min(ttlMs / 4, 60_000)) {
          refreshed = Date.now();
          await client.sendCommand(['PEXPIRE', key, String(ttlMs)]);
        }
        const reply = await client.sendCommand(['XREAD', 'COUNT', '100', 'BLOCK', blockMs, 'STREAMS', key, last]);
        for (const entry of entriesOfXRead(reply, key)) {
          if (subscriber.closed) return;
          last = entry.id;
          subscriber.next({ id: entry.id, control: decodeControl(key, entry) });
        }
      }
    };
    loop().catch((e: unknown) => subscriber.error(e));
  });
}

/**
 * Hands one control message to the agent. An approval for a call the agent does not know is the
 * agent's error (BasicAgent's `AgentError` `UnknownToolCall`), thrown here for the worker to
 * handle; an agent without `approve` / `cancelToolCall` gets a TypeError saying which it lacks.
 */
export function applyRunControl(agent: ControllableAgent, control: RunControl): void {
  switch (control.kind) {
    case 'steer':
      return agent.steer(control.message, control.policy);
    case 'followUp':
      return agent.followUp(control.message);
    case 'abort':
      return agent.abort(control.reason);
    case 'approve': {
      if (!agent.approve) throw new TypeError(`applyRunControl: the agent has no approve() for the approval of "${control.toolCallId}"`);
      const { kind: _kind, toolCallId, ...decision } = control;
      agent.approve(toolCallId, decision);
      return;
    }
    case 'cancelToolCall':
      if (!agent.cancelToolCall) throw new TypeError(`applyRunControl: the agent has no cancelToolCall() for "${control.toolCallId}"`);
      agent.cancelToolCall(control.toolCallId, control.reason);
      return;
  }
}

function decodeControl(key: string, entry: StreamEntry): RunControl {
  const where = `Redis stream "${key}" entry ${entry.id}`;
  let raw: unknown;
  try {
    raw = JSON.parse(entry.fields['data'] ?? '');
  } catch (e) {
    throw new TypeError(`${where}: data is not JSON (${(e as Error).message})`);
  }
  return checkControl(raw, where);
}

const POLICIES: readonly string[] = ['wait', 'skip', 'interrupt'] satisfies SteeringPolicy[];

const KINDS = '"steer", "followUp", "abort", "approve" or "cancelToolCall"';

function checkControl(raw: unknown, where: string): RunControl {
  const control = raw as { kind?: unknown; message?: unknown; policy?: unknown; reason?: unknown; toolCallId?: unknown; approved?: unknown; args?: unknown } | null;
  if (typeof control !== 'object' || control === null) throw new TypeError(`${where}: a control must be an object`);
  const { kind } = control;
  if (control.reason !== undefined && typeof control.reason !== 'string') throw new TypeError(`${where}: control.reason must be a string`);
  const why = control.reason === undefined ? {} : { reason: control.reason };
  if (kind === 'abort') return { kind, ...why };
  if (kind === 'approve' || kind === 'cancelToolCall') {
    const { toolCallId } = control;
    if (typeof toolCallId !== 'string' || toolCallId === '') throw new TypeError(`${where}: control.toolCallId must be a non-empty string`);
    if (kind === 'cancelToolCall') return { kind, toolCallId, ...why };
    if (typeof control.approved !== 'boolean') throw new TypeError(`${where}: control.approved must be true or false`);
    const { args } = control;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) throw new TypeError(`${where}: control.args must be an object`);
    return { kind, toolCallId, approved: control.approved, ...(args === undefined ? {} : { args: args as Record<string, unknown> }), ...why };
  }
  if (kind !== 'steer' && kind !== 'followUp') throw new TypeError(`${where}: control.kind must be ${KINDS}, got ${JSON.stringify(kind)}`);
  const message = checkMessage(control.message, where);
  if (kind === 'followUp') return { kind, message };
  if (control.policy !== undefined && !POLICIES.includes(control.policy as string)) {
    throw new TypeError(`${where}: control.policy must be one of ${POLICIES.join(', ')}, got ${JSON.stringify(control.policy)}`);
  }
  return control.policy === undefined ? { kind, message } : { kind, message, policy: control.policy as SteeringPolicy };
}

function checkMessage(message: unknown, where: string): string | AgentMessage {
  if (typeof message === 'string') return message;
  const checked = runCheck(messageChecks().agentMessage, message, 'control.message');
  if (!checked.ok) throw new TypeError(`${where}: ${checked.message}`);
  return checked.value;
}
