/** How a provider call failed. Only `rateLimited` and `network` are retryable. */
export type ProviderErrorKind =
  | 'rateLimited'
  | 'network'
  | 'auth'
  | 'api'
  | 'contextOverflow'
  | 'cancelled'
  | 'circuitOpen'
  | 'other';

export interface ProviderErrorInit {
  retryAfterMs?: number;
  status?: number;
  provider?: string;
  cause?: unknown;
}

/**
 * A typed provider failure, delivered as an Observable error so operators such as
 * `retryBackoff` can act on it. The message is the provider's own words; API keys never
 * appear in it.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly provider?: string;

  constructor(kind: ProviderErrorKind, message: string, init: ProviderErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = kind;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.status !== undefined) this.status = init.status;
    if (init.provider !== undefined) this.provider = init.provider;
  }

  get retryable(): boolean {
    return this.kind === 'rateLimited' || this.kind === 'network';
  }

  static rateLimited(message: string, retryAfterMs?: number, init: ProviderErrorInit = {}): ProviderError {
    return new ProviderError('rateLimited', message, { ...init, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  }
  static network(message: string, init?: ProviderErrorInit): ProviderError {
    return new ProviderError('network', message, init);
  }
  static auth(message: string, init?: ProviderErrorInit): ProviderError {
    return new ProviderError('auth', message, init);
  }
  static api(message: string, init?: ProviderErrorInit): ProviderError {
    return new ProviderError('api', message, init);
  }
  static contextOverflow(message: string, init?: ProviderErrorInit): ProviderError {
    return new ProviderError('contextOverflow', message, init);
  }
  static cancelled(message = 'Request cancelled', init?: ProviderErrorInit): ProviderError {
    return new ProviderError('cancelled', message, init);
  }
  static other(message: string, init?: ProviderErrorInit): ProviderError {
    return new ProviderError('other', message, init);
  }
}

export const isProviderError = (e: unknown): e is ProviderError => e instanceof ProviderError;

/** Phrases providers use for "the prompt is too long", lower-cased. */
export const CONTEXT_OVERFLOW_PHRASES: readonly string[] = [
  'prompt is too long',
  'context length exceeded',
  'context_length_exceeded',
  'maximum context length',
  'exceeds the context window',
  'input is too long',
  'too many tokens',
  'reduce the length of the messages',
  'request too large',
  'exceeds the maximum number of tokens',
  'input token count',
  'context window',
  'token limit',
  'string_above_max_length',
  'message is too long',
  'model_context_window_exceeded',
];

/** True when a provider's error text says the context did not fit. */
export function isContextOverflowMessage(message: string | undefined): boolean {
  if (!message) return false;
  const lower = message.toLowerCase();
  return CONTEXT_OVERFLOW_PHRASES.some((p) => lower.includes(p));
}

export type ToolErrorKind = 'failed' | 'notFound' | 'invalidArgs' | 'cancelled' | 'timeout';

/** A tool failure; the loop turns it into an `isError` result the model can read. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly kind: ToolErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  static failed(message: string): ToolError {
    return new ToolError('failed', message);
  }
  static invalidArgs(message: string): ToolError {
    return new ToolError('invalidArgs', message);
  }
  static notFound(name: string): ToolError {
    return new ToolError('notFound', `Tool not found: ${name}`);
  }
}

export type AgentErrorCode =
  | 'AlreadyRunning'
  | 'InvalidContinue'
  | 'MissingIds'
  | 'ScriptExhausted'
  | 'ReplayDiverged'
  | 'InvalidConfig'
  | 'InvalidJson'
  | 'StrategyError'
  | 'InvalidTool'
  | 'InvalidPrompt'
  | 'ProviderContract'
  | 'UnknownToolCall'
  | 'UnknownBranch'
  | 'InvalidApproval'
  | 'InvalidOutput';

/** A misuse of the agent API, typed so callers can branch on `code`. */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
