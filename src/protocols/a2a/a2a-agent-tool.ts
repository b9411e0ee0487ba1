import { Observable } from 'rxjs';
import type { AgentCard, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { defineTool } from '../../tools/define-tool.js';
import { toolProgress, toolUpdate, type Tool, type ToolEmission, type ToolResult } from '../../types/tool.js';
import { importOptionalPeer } from '../../util/optional-peer.js';
import { a2aMessageOf, dataOfParts, eventIdOf, PHI_RX_KEY, TASK_STATE, TERMINAL_STATES as TERMINAL, textOfParts } from './a2a-parts.js';

export interface A2aAgentToolOptions {
  /** The tool's name (default: `ask_` and the card's name, e.g. `ask_calculator`). */
  name?: string;
  /** What the model reads (default: the card's description and skills). */
  description?: string;
  /** Sent as `Authorization: Bearer <token>` (the card's HTTP bearer scheme). Never logged nor put in results. */
  bearerToken?: string;
  /** Sent in the header the card's API key scheme names (default `x-api-key`). Never logged nor put in results. */
  apiKey?: string;
  /** More headers for every request. */
  headers?: Record<string, string>;
  /** Which binding to prefer when the card offers both (default JSON-RPC). */
  transport?: 'JSONRPC' | 'HTTP+JSON';
  /** Keep one remote context across calls, so the remote agent remembers earlier calls (default true). */
  keepContext?: boolean;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** What the tool's result carries in `details`. */
export interface A2aToolDetails {
  taskId: string;
  contextId: string;
  state: 'completed' | 'input-required' | 'failed' | 'canceled' | 'rejected';
  /** The remote agent's structured output (its `output` artifact), when it gave one. */
  output?: unknown;
}

const FEATURE = 'phi-rx/a2a (a2aAgentTool)';

/**
 * A remote A2A agent as a phi-rx tool: each call sends `{ task }` as a message with
 * SendStreamingMessage and streams the agent's text as tool updates (and its other status messages
 * as progress lines); the result is the agent's answer (its artifacts, else its last message),
 * `details.output` its structured output. Cancelling the call (or aborting the run) cancels the
 * remote task. When the remote agent asks for input, the result says what it asks and the next call
 * answers it. Credentials go where the card's security schemes say (bearer, API key header); they
 * are never written to results, errors or logs.
 *
 * @example
 * const researcher = await a2aAgentTool('https://agents.example.com', { bearerToken: process.env.AGENT_TOKEN });
 * const agent = new BasicAgent({ model, tools: [researcher] });
 */
export async function a2aAgentTool(target: string | AgentCard, options: A2aAgentToolOptions = {}): Promise<Tool<{ task: string }>> {
  const sdk = await importOptionalPeer<typeof import('@a2a-js/sdk/client')>('@a2a-js/sdk/client', FEATURE);
  const headers = { ...options.headers };
  const baseFetch = options.fetch ?? fetch;
  const fetchImpl: typeof fetch = async (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    const response = await baseFetch(input, { ...init, headers: merged });
    if (response.status === 401 || response.status === 403) throw new Error(`the agent refused the request (HTTP ${response.status}): ${await refusal(response)}`);
    return response;
  };
  const factory = new sdk.ClientFactory({
    transports: [new sdk.JsonRpcTransportFactory({ fetchImpl }), new sdk.RestTransportFactory({ fetchImpl })],
    preferredTransports: [options.transport ?? 'JSONRPC'],
    cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl }),
  });
  // The card may need the credentials too: send them as the options say before the card says how.
  if (options.bearerToken !== undefined) headers.authorization = `Bearer ${options.bearerToken}`;
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  const where = typeof target === 'string' ? target : target.name;
  let client: Client;
  try {
    client = typeof target === 'string' ? await factory.createFromUrl(target) : await factory.createFromAgentCard(target);
  } catch (e) {
    throw new Error(`a2aAgentTool: cannot reach the A2A agent at ${where}: ${redact(e, options)}`, { cause: e });
  }
  const card = await client.getAgentCard();
  placeCredentials(card, headers, options);
  const session = { contextId: undefined as string | undefined, waitingTaskId: undefined as string | undefined };
  const keep = options.keepContext !== false;
  const tool = defineTool({
    name: options.name ?? `ask_${slug(card.name)}`,
    label: card.name,
    description: options.description ?? describeCard(card),
    parameters: { type: 'object', properties: { task: { type: 'string', description: `What to ask ${card.name}` } }, required: ['task'], additionalProperties: false },
    execute: (args, ctx) => new Observable<ToolEmission>((subscriber) => {
      const controller = new AbortController();
      const call = new RemoteCall(client, controller.signal, (e) => subscriber.next(e));
      let done = false;
      const stop = (): void => {
        if (done) return;
        done = true;
        controller.abort();
        call.cancelRemote();
      };
      ctx.signal.addEventListener('abort', stop, { once: true });
      const message = a2aMessageOf(String((args as { task: unknown }).task), {
        ...(keep && session.contextId ? { contextId: session.contextId } : {}),
        ...(session.waitingTaskId ? { taskId: session.waitingTaskId } : {}),
      });
      call.run(message).then(
        (result) => {
          done = true;
          const details = result.details as A2aToolDetails;
          if (keep) session.contextId = details.contextId;
          session.waitingTaskId = details.state === 'input-required' ? details.taskId : undefined;
          subscriber.next(result);
          subscriber.complete();
        },
        (e: unknown) => {
          done = true;
          subscriber.next({ content: [{ type: 'text', text: `The A2A agent ${card.name} failed: ${redact(e, options)}` }], isError: true });
          subscriber.complete();
        },
      );
      return () => {
        ctx.signal.removeEventListener('abort', stop);
        stop();
      };
    }),
  });
  return tool as unknown as Tool<{ task: string }>;
}

/** One call: the stream of the remote task, folded into a result. */
class RemoteCall {
  private taskId: string | undefined;
  private text = '';
  private answer: string[] = [];
  private output: unknown;
  private lastMessage = '';

  constructor(
    private readonly client: Client,
    private readonly signal: AbortSignal,
    private readonly emit: (e: ToolEmission) => void,
  ) {}

  /**
   * Streams the task to its end. When the connection drops before, subscribes to the task again (up
   * to 3 times): the snapshot replaces what was gathered, and only updates after the snapshot's
   * phi-rx event id count (a phi-rx server's updates carry it), so nothing is lost or repeated.
   */
  async run(message: ReturnType<typeof a2aMessageOf>): Promise<ToolResult> {
    const at = { state: undefined as number | undefined, contextId: message.contextId, after: 0 };
    let stream: AsyncIterable<StreamResponse> = this.client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }, { signal: this.signal });
    for (let retries = 0; ; retries++) {
      try {
        for await (const response of stream) this.take(response, at);
        break;
      } catch (e) {
        const over = at.state !== undefined && (TERMINAL.has(at.state) || at.state === TASK_STATE.inputRequired);
        if (this.signal.aborted || !this.taskId || over || retries >= 3) throw e;
        // A task that ended meanwhile cannot be subscribed to (the protocol's rule): read it instead.
        const task = await this.client.getTask({ tenant: '', id: this.taskId }, { signal: this.signal }).catch(() => undefined);
        const state = task?.status?.state;
        if (task && state !== undefined && (TERMINAL.has(state) || state === TASK_STATE.inputRequired)) {
          at.after = -1;
          this.take({ payload: { $case: 'task', value: task } }, at);
          this.lastMessage = textOfParts(task.status?.message?.parts) || this.lastMessage;
          break;
        }
        stream = this.client.resubscribeTask({ tenant: '', id: this.taskId }, { signal: this.signal });
        at.after = -1; // the next task snapshot replaces what was gathered
      }
    }
    return this.result(at.state, at.contextId);
  }

  private take(response: StreamResponse, at: { state: number | undefined; contextId: string; after: number }): void {
    const p = response.payload;
    if (p?.$case === 'task') {
      this.taskId = p.value.id;
      at.contextId = p.value.contextId;
      at.state = p.value.status?.state;
      if (at.after === -1) this.restart(p.value, at);
      return;
    }
    const id = p?.$case === 'statusUpdate' || p?.$case === 'artifactUpdate' ? eventIdOf(p.value) : undefined;
    if (id !== undefined && id <= at.after) return; // in the snapshot already
    if (p?.$case === 'statusUpdate') {
      this.taskId ??= p.value.taskId;
      at.state = p.value.status?.state;
      this.onStatus(response);
    } else if (p?.$case === 'artifactUpdate' && p.value.artifact) {
      const a = p.value.artifact;
      if (a.name === 'output') this.output = dataOfParts(a.parts)[0];
      else this.answer.push(textOfParts(a.parts));
    } else if (p?.$case === 'message') {
      this.lastMessage = textOfParts(p.value.parts);
      at.contextId = p.value.contextId;
      at.state = TASK_STATE.completed;
    }
  }

  /** Takes a task snapshot (after subscribing again) as everything so far. */
  private restart(task: Task, at: { after: number }): void {
    at.after = eventIdOf(task) ?? 0;
    this.text = '';
    for (const m of task.history.slice(1)) {
      const type = (m.metadata?.[PHI_RX_KEY] as { type?: string } | undefined)?.type;
      if (type === 'MessageUpdate') this.text += textOfParts(m.parts);
      else if (textOfParts(m.parts)) this.lastMessage = textOfParts(m.parts);
    }
    this.answer = task.artifacts.filter((a) => a.name !== 'output').map((a) => textOfParts(a.parts));
    const output = task.artifacts.find((a) => a.name === 'output');
    if (output) this.output = dataOfParts(output.parts)[0];
    if (this.text) this.emit(toolUpdate(this.text));
  }

  /** Cancels the remote task (the call was cancelled): best effort, the call has ended either way. */
  cancelRemote(): void {
    if (this.taskId) this.client.cancelTask({ tenant: '', id: this.taskId, metadata: {} }).catch(() => undefined);
  }

  private onStatus(response: StreamResponse): void {
    const value = response.payload?.$case === 'statusUpdate' ? response.payload.value : undefined;
    const message = value?.status?.message;
    if (!message) return;
    const text = textOfParts(message.parts);
    const type = (value.metadata?.[PHI_RX_KEY] as { type?: string } | undefined)?.type;
    if (type === 'MessageUpdate') {
      this.text += text;
      this.emit(toolUpdate(this.text));
    } else if (text) {
      this.lastMessage = text;
      this.emit(toolProgress(text));
    }
  }

  private result(state: number | undefined, contextId: string): ToolResult {
    const details: A2aToolDetails = { taskId: this.taskId ?? '', contextId, state: stateName(state), ...(this.output !== undefined ? { output: this.output } : {}) };
    const answer = this.answer.join('\n') || this.text || this.lastMessage;
    if (details.state === 'completed') return { content: [{ type: 'text', text: answer }], details };
    if (details.state === 'input-required') return { content: [{ type: 'text', text: `The agent needs an answer before it goes on (call again with it): ${this.lastMessage}` }], details };
    return { content: [{ type: 'text', text: `The remote task ended ${details.state}: ${this.lastMessage || 'no reason given'}` }], details, isError: true };
  }
}

function stateName(state: number | undefined): A2aToolDetails['state'] {
  switch (state) {
    case TASK_STATE.completed:
      return 'completed';
    case TASK_STATE.inputRequired:
      return 'input-required';
    case TASK_STATE.canceled:
      return 'canceled';
    case TASK_STATE.rejected:
      return 'rejected';
    default:
      return 'failed';
  }
}

/**
 * Puts the credentials where the card's security schemes say (the header of an API key scheme);
 * throws, naming the scheme, when the card requires credentials the options do not have.
 */
function placeCredentials(card: AgentCard, headers: Record<string, string>, options: A2aAgentToolOptions): void {
  const schemes = Object.entries(card.securitySchemes ?? {});
  for (const [, scheme] of schemes) {
    const s = scheme.scheme;
    if (s?.$case === 'apiKeySecurityScheme' && options.apiKey !== undefined && s.value.location.toLowerCase() === 'header' && s.value.name) {
      delete headers['x-api-key'];
      headers[s.value.name.toLowerCase()] = options.apiKey;
    }
  }
  const required = (card.securityRequirements ?? []).flatMap((r) => Object.keys(r.schemes ?? {}));
  if (required.length === 0 || options.bearerToken !== undefined || options.apiKey !== undefined || options.headers?.authorization !== undefined) return;
  throw new Error(`a2aAgentTool: the agent ${card.name} requires credentials (security scheme ${required.join(' or ')}): pass options.bearerToken or options.apiKey`);
}

function describeCard(card: AgentCard): string {
  const skills = card.skills.filter((s) => !s.tags.includes('tool')).map((s) => `- ${s.name}: ${s.description}`);
  return [`Ask the agent "${card.name}": ${card.description}`, ...skills].join('\n');
}

/** What a 401 / 403 answer says (its JSON `error`, or its text), at most 300 characters. */
async function refusal(response: Response): Promise<string> {
  const text = (await response.text().catch(() => '')).slice(0, 300);
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error === 'string') return error;
  } catch {
    // not JSON: the text itself
  }
  return text || response.statusText;
}

/** An error's message with the credentials blanked out. */
function redact(e: unknown, options: A2aAgentToolOptions): string {
  let text = e instanceof Error ? e.message : String(e);
  for (const secret of [options.bearerToken, options.apiKey]) if (secret) text = text.split(secret).join('[redacted]');
  return text;
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '').slice(0, 58) || 'agent';
}
