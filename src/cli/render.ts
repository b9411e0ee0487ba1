import type { AgentEvent, EventOf } from '../types/events.js';
import { textOf, type AssistantMessage } from '../types/message.js';
import type { ModelConfig } from '../types/provider.js';
import { Usage } from '../types/usage.js';
import { terminalSafe as safe } from './terminal-safe.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Output {
  write(text: string): unknown;
}

export interface RendererOptions {
  /** A terminal: colours, a spinner redrawn in place. Else plain lines. */
  tty: boolean;
  /** For the cost line. */
  model?: ModelConfig;
  /** A fallback chain (`models`): each answer is priced by the model that wrote it, `model`'s price otherwise. */
  models?: readonly ModelConfig[];
}

interface RunningTool {
  name: string;
  startedAt: number;
  progress: string;
}

/**
 * Renders agent events for a person at a terminal: streamed text, tool calls with a spinner and
 * their progress, retries, model fallbacks, compaction, and usage and cost at the end. Every text
 * that comes from the run (the model's, a tool's, an error's) goes through {@link terminalSafe}: no
 * escape sequence of theirs reaches the terminal.
 */
export class TerminalRenderer {
  private readonly tools = new Map<string, RunningTool>();
  private spinner: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  private spinnerShown = false;
  private streamed = false;
  /** The cursor is not at the start of a line. */
  private midLine = false;

  constructor(
    private readonly out: Output,
    private readonly options: RendererOptions,
  ) {}

  event(e: AgentEvent): void {
    switch (e.type) {
      case 'MessageUpdate':
        if (e.delta.type === 'text') this.text(e.delta.delta);
        return;
      case 'MessageEnd':
        if (e.message.role === 'assistant') this.assistantEnd(e.message);
        return;
      case 'ToolExecutionStart':
        this.endLine();
        this.tools.set(e.toolCallId, { name: `${safe(e.toolName)}${summary(e.args)}`, startedAt: e.timestamp, progress: '' });
        if (!this.options.tty) this.line(`→ ${safe(e.toolName)}${summary(e.args)}`);
        return this.redraw();
      case 'ProgressMessage': {
        const tool = this.tools.get(e.toolCallId);
        if (tool) tool.progress = safe(e.text);
        if (!this.options.tty) this.line(`  … ${safe(e.text)}`);
        return this.redraw();
      }
      case 'ToolExecutionEnd':
        return this.toolEnd(e);
      case 'RetryScheduled':
        this.endLine();
        return this.line(this.paint('33', `↻ retry ${e.attempt} in ${e.delayMs} ms (${safe(e.errorKind)}: ${safe(e.errorMessage)})`));
      case 'ModelFallback':
        this.endLine();
        return this.line(this.paint('33', safe(`⇢ ${e.from.provider}/${e.from.id} gave up (${e.errorMessage}); ${e.to.provider}/${e.to.id} takes over`)));
      case 'CompactionEnd':
        this.endLine();
        return this.line(this.paint('2', `⇣ context compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`));
      case 'HookError':
        this.endLine();
        return this.line(this.paint('33', safe(`! ${e.hook} failed: ${e.message}`)));
      case 'ToolApprovalRequested':
        this.endLine();
        return this.line(this.paint('33', safe(`? ${e.toolName}${summary(e.args)} waits for approval (${e.toolCallId})`)));
      case 'ToolApprovalResolved':
        this.endLine();
        return this.line(this.paint(e.approved ? '32' : '31', safe(`${e.approved ? '✓ approved' : '✗ denied'}: ${e.toolName}${e.reason ? ` (${e.reason})` : ''}`)));
      case 'InputRejected':
        this.endLine();
        return this.line(this.paint('31', safe(`✗ input rejected: ${e.reason}`)));
      case 'GuardrailTripped':
        this.endLine();
        return this.line(this.paint('31', safe(`✗ guardrail ${e.guardrail} tripped (${e.kind}${e.toolCallId ? `, call ${e.toolCallId}` : ''})`)));
      case 'AgentEnd':
        return this.agentEnd(e);
      default:
        return undefined;
    }
  }

  /** Stops the spinner (call when the run is over, however it ended). */
  close(): void {
    if (this.spinner) clearInterval(this.spinner);
    this.spinner = undefined;
    this.clearSpinner();
  }

  private text(delta: string): void {
    this.clearSpinner();
    this.out.write(safe(delta));
    this.streamed = true;
    this.midLine = !delta.endsWith('\n');
  }

  private assistantEnd(message: AssistantMessage): void {
    // A replayed session has no deltas: the text arrives whole.
    if (!this.streamed) {
      const text = textOf(message);
      if (text) this.text(text);
    }
    this.streamed = false;
    this.endLine();
    if (message.stopReason === 'error') this.line(this.paint('31', `✗ ${safe(message.errorMessage ?? 'the model call failed')}`));
  }

  private toolEnd(e: EventOf<'ToolExecutionEnd'>): void {
    const tool = this.tools.get(e.toolCallId);
    this.tools.delete(e.toolCallId);
    this.clearSpinner();
    const ms = tool ? ` ${e.timestamp - tool.startedAt} ms` : '';
    const label = tool?.name ?? safe(e.toolName);
    if (e.isError) this.line(this.paint('31', `✗ ${label}${ms}: ${safe(firstLine(textOf(e.result)))}`));
    else this.line(`${this.paint('32', '✓')} ${label}${this.paint('2', ms)}`);
    this.redraw();
  }

  private agentEnd(e: EventOf<'AgentEnd'>): void {
    this.close();
    this.endLine();
    const turns = e.messages.filter((m) => m.role === 'assistant').length;
    const dollars = costOf(e, this.options);
    const cost = dollars !== undefined ? ` · $${dollars.toFixed(4)}` : '';
    const how = e.stopReason === 'aborted' ? this.paint('33', '■ aborted') : e.stopReason === 'error' ? this.paint('31', '✗ error') : `● ${safe(e.stopReason)}`;
    this.line(`${how} · ${turns} turn${turns === 1 ? '' : 's'} · ${e.usage.input} in / ${e.usage.output} out tokens${cost}`);
  }

  private redraw(): void {
    if (!this.options.tty) return;
    if (this.tools.size === 0) {
      if (this.spinner) clearInterval(this.spinner);
      this.spinner = undefined;
      return this.clearSpinner();
    }
    this.spinner ??= setInterval(() => {
      this.frame = (this.frame + 1) % SPINNER.length;
      this.drawSpinner();
    }, 80);
    this.drawSpinner();
  }

  private drawSpinner(): void {
    const tools = [...this.tools.values()];
    const progress = tools.map((t) => t.progress).filter(Boolean).at(-1);
    this.out.write(`\r\x1b[2K${this.paint('36', SPINNER[this.frame]!)} ${tools.map((t) => t.name).join(', ')}${progress ? this.paint('2', ` — ${progress}`) : ''}`);
    this.spinnerShown = true;
  }

  private clearSpinner(): void {
    if (!this.spinnerShown) return;
    this.out.write('\r\x1b[2K');
    this.spinnerShown = false;
  }

  private endLine(): void {
    if (this.midLine) this.out.write('\n');
    this.midLine = false;
  }

  private line(text: string): void {
    this.clearSpinner();
    this.out.write(`${text}\n`);
  }

  private paint(code: string, text: string): string {
    return this.options.tty ? `\x1b[${code}m${text}\x1b[0m` : text;
  }
}

function summary(args: Record<string, unknown>): string {
  const json = JSON.stringify(args);
  // JSON escapes C0 in strings but not C1 (`\x9b` is CSI on 8-bit terminals).
  return json === '{}' ? '()' : safe(`(${json.length > 60 ? `${json.slice(0, 57)}...` : json})`);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

/** The run's cost: the whole usage at `model`'s price, or with a chain each answer at its own model's price. */
function costOf(e: EventOf<'AgentEnd'>, options: RendererOptions): number | undefined {
  const chain = options.models;
  if (!chain || chain.length === 0) return options.model?.cost ? Usage.estimatedCost(e.usage, options.model.cost) : undefined;
  let total = 0;
  let priced = false;
  for (const m of e.messages) {
    if (m.role !== 'assistant') continue;
    const price = chain.find((c) => c.provider === m.provider && c.id === m.model)?.cost ?? options.model?.cost;
    if (!price) continue;
    priced = true;
    total += Usage.estimatedCost(m.usage, price);
  }
  return priced ? total : undefined;
}
