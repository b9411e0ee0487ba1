import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';

type ProgressHandler = (progress: Progress) => void;

/**
 * Delivers `notifications/progress` to the call that asked for them, synchronously and in wire
 * order.
 *
 * Why not the SDK's `onprogress`: the SDK dispatches notifications a microtask late but resolves
 * responses at once, so a progress notification that arrives in the same chunk as the result
 * (common over SSE) is dropped as "unknown token". Calls made through the router carry their own
 * progress token, and the router sees each message before the SDK does.
 */
export class ProgressRouter {
  private readonly handlers = new Map<string, ProgressHandler>();
  private next = 0;

  /** Sees every incoming message first; call before `client.connect(transport)`, which chains it. */
  attach(transport: Transport): void {
    transport.onmessage = (message: JSONRPCMessage) => this.dispatch(message);
  }

  /** A fresh token routed to `handler` until the returned function is called. */
  register(handler: ProgressHandler): { token: string; unregister: () => void } {
    const token = `phi-rx-progress-${++this.next}`;
    this.handlers.set(token, handler);
    return { token, unregister: () => this.handlers.delete(token) };
  }

  private dispatch(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message) return;
    const params = message.params as { progressToken?: unknown } & Partial<Progress> | undefined;
    if (typeof params?.progressToken !== 'string' || typeof params.progress !== 'number') return;
    const progress: Progress = { progress: params.progress };
    if (typeof params.total === 'number') progress.total = params.total;
    if (typeof params.message === 'string') progress.message = params.message;
    this.handlers.get(params.progressToken)?.(progress);
  }
}
