import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { lastValueFrom, tap } from 'rxjs';
import { BasicAgent } from '../agent/basic-agent.js';
import { createAgentFromConfig, loadAgentConfig, type ConfiguredAgent } from '../config/index.js';
import { FileSessionStore, isSessionStoreError, parseSession, recordSession, SessionRecorder, type Session } from '../session/index.js';
import { anthropic, google, openai } from '../providers/index.js';
import { scriptedModel } from '../testing/scripted-provider.js';
import type { AgentEndEvent, AgentEvent } from '../types/events.js';
import { textOf } from '../types/message.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import { countWordsTool, demoProvider, scriptFromFile } from './demo.js';
import { interruptHandler } from './interrupt.js';
import { TerminalRenderer, type Output } from './render.js';
import { jsonLine, terminalSafe } from './terminal-safe.js';

export interface Io {
  stdout: Output & { isTTY?: boolean };
  stderr: Output;
  env: Readonly<Record<string, string | undefined>>;
  /** Registers the Ctrl-C handler. */
  onInterrupt(handler: () => void): void;
  exit(code: number): void;
}

export interface RunFlags {
  prompt: string;
  config?: string;
  script?: string;
  json: boolean;
  sessions: string;
  save: boolean;
}

/** Exit codes: 0 done, 1 the run failed, 130 aborted (as shells report Ctrl-C). */
export const exitCodeOf = (end: AgentEndEvent | undefined): number => (!end ? 1 : end.stopReason === 'aborted' ? 130 : end.stopReason === 'error' ? 1 : 0);

export function sessionsDir(flag: string | undefined, env: Io['env']): string {
  return flag ?? env['PHI_RX_SESSIONS'] ?? path.join(os.homedir(), '.phi-rx', 'sessions');
}

/** `phi-rx run`: one prompt, rendered live (or as JSON lines), recorded to the session store. */
export async function runCommand(flags: RunFlags, io: Io): Promise<number> {
  const setup = await agentFor(flags, io);
  const { agent } = setup;
  const renderer = new TerminalRenderer(io.stdout, { tty: Boolean(io.stdout.isTTY) && !flags.json, model: agent.model, ...(setup.models ? { models: setup.models } : {}) });
  const recorder = new SessionRecorder();
  // Stays installed to the end: a second Ctrl-C also cuts short a slow shutdown (a tool's child process ignoring SIGTERM).
  io.onInterrupt(interruptHandler({ abort: () => agent.abort(), exit: () => io.exit(130), notice: (text) => io.stderr.write(`\n${text}\n`) }));
  let end: AgentEndEvent | undefined;
  try {
    await lastValueFrom(
      agent.prompt(flags.prompt).pipe(
        recordSession(recorder),
        tap((e: AgentEvent) => {
          if (e.type === 'AgentEnd') end = e;
          if (flags.json) io.stdout.write(`${jsonLine(e)}\n`);
          else renderer.event(e);
        }),
      ),
      { defaultValue: undefined },
    );
  } catch (e) {
    io.stderr.write(`phi-rx: the run failed: ${terminalSafe((e as Error).message)}\n`);
  } finally {
    renderer.close();
    await setup.close();
  }
  if (flags.save) {
    recorder.flush();
    const store = new FileSessionStore(flags.sessions);
    for (const session of recorder.drainCompleted()) await store.save(session);
    if (!flags.json) io.stderr.write(`session ${agent.sessionId} saved in ${flags.sessions}\n`);
  }
  return exitCodeOf(end);
}

interface AgentSetup {
  agent: BasicAgent;
  /** The config's model and fallback models, when it names fallbacks. */
  models?: readonly ModelConfig[];
  close(): Promise<void>;
}

async function agentFor(flags: RunFlags, io: Io): Promise<AgentSetup> {
  const say = (text: string): void => {
    io.stderr.write(`${text}\n`);
  };
  if (flags.config) {
    const loaded = await loadAgentConfig(flags.config, { env: io.env });
    const scripted = loaded.config.model.provider === 'scripted';
    const provider = scripted ? await scriptedFor(flags) : undefined;
    if (scripted) say('The config names the scripted provider: no model is called.');
    const configured: ConfiguredAgent = await createAgentFromConfig(flags.config, { env: io.env, ...(provider ? { provider } : {}) });
    // The scripted demo calls its own tool.
    if (scripted && !flags.script && !configured.agent.toolList.some((t) => t.name === countWordsTool.name)) configured.agent.withTools(countWordsTool);
    return { agent: configured.agent, ...(configured.models.length > 1 ? { models: configured.models } : {}), close: configured.close };
  }
  const model = flags.script ? undefined : modelFromEnv(io.env);
  if (model) return { agent: new BasicAgent({ model }), close: async () => undefined };
  say(
    flags.script
      ? `Running on the scripted provider (turns from ${flags.script}).`
      : 'No API key found (ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY) and no --config: running on the scripted provider.',
  );
  return { agent: new BasicAgent({ model: scriptedModel(), provider: await scriptedFor(flags), tools: [countWordsTool] }), close: async () => undefined };
}

function scriptedFor(flags: RunFlags): Promise<Provider> | Provider {
  return flags.script ? scriptFromFile(flags.script) : demoProvider(flags.prompt);
}

function modelFromEnv(env: Io['env']): ModelConfig | undefined {
  if (env['ANTHROPIC_API_KEY']) return anthropic('claude-sonnet-4-5');
  if (env['OPENAI_API_KEY']) return openai('gpt-4o-mini');
  if (env['GEMINI_API_KEY']) return google('gemini-2.5-flash');
  return undefined;
}

/** `phi-rx replay session.json`: renders a recorded session, loop by loop. */
export async function replayCommand(file: string, json: boolean, io: Io): Promise<number> {
  const session = await readSessionFile(file);
  const renderer = new TerminalRenderer(io.stdout, { tty: Boolean(io.stdout.isTTY) && !json });
  let last: AgentEndEvent | undefined;
  for (const loop of session.loops) {
    if (!json) io.stdout.write(terminalSafe(`── loop ${loop.loopId}${loop.parentLoopId ? ` (from ${loop.parentLoopId})` : ''}`) + '\n');
    for (const event of loop.events) {
      if (json) io.stdout.write(`${jsonLine(event)}\n`);
      else if (event.type !== 'MessageUpdate') {
        if (event.type === 'MessageStart' && event.message.role === 'user') io.stdout.write(`> ${terminalSafe(textOf(event.message))}\n`);
        renderer.event(event);
      }
      if (event.type === 'AgentEnd') last = event;
    }
  }
  renderer.close();
  return last ? 0 : 1;
}

async function readSessionFile(file: string): Promise<Session> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: cannot read the session (${(e as Error).message})`);
  }
  const parsed = parseSession(raw);
  if (!parsed.success) {
    throw new Error(`${file}: not a phi-rx session: ${parsed.error.path.join('.') || '(root)'}: ${parsed.error.problem}`);
  }
  return parsed.data;
}

/** `phi-rx sessions`: the stored sessions, most recent first; a corrupt file is named on stderr and skipped. */
export async function sessionsCommand(dir: string, io: Io): Promise<number> {
  const store = new FileSessionStore(dir);
  const ids = await store.listIds().catch(() => [] as string[]);
  if (ids.length === 0) {
    io.stdout.write(`No sessions in ${dir}\n`);
    return 0;
  }
  const sessions: Session[] = [];
  for (const id of ids) {
    try {
      sessions.push(await store.load(id));
    } catch (e) {
      // A corrupt file is named and skipped, the rest still listed; one deleted since listed is skipped.
      if (isSessionStoreError(e, 'SessionCorrupt')) io.stderr.write(`warning: skipped a corrupt session: ${terminalSafe(e.message)}\n`);
      else if (!isSessionStoreError(e, 'SessionNotFound')) throw e;
    }
  }
  sessions.sort((a, b) => b.lastActiveAt - a.lastActiveAt);
  for (const s of sessions) {
    const first = s.loops[0]?.messages.find((m) => m.role === 'user');
    const prompt = first && first.role === 'user' ? textOf(first).replace(/\s+/g, ' ') : '';
    const stop = s.loops.at(-1)?.stopReason ?? s.loops.at(-1)?.status ?? '';
    io.stdout.write(`${terminalSafe(`${s.sessionId}  ${new Date(s.lastActiveAt).toISOString()}  ${s.loops.length} loop${s.loops.length === 1 ? '' : 's'}  ${stop}  ${prompt.length > 50 ? `${prompt.slice(0, 47)}...` : prompt}`)}\n`);
  }
  io.stdout.write(`${sessions.length} session${sessions.length === 1 ? '' : 's'} in ${dir}\n`);
  return 0;
}
