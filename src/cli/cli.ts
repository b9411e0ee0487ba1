import path from 'node:path';
import { parseArgs } from 'node:util';
import { replayCommand, runCommand, sessionsCommand, sessionsDir, type Io } from './commands.js';
import { terminalSafe } from './terminal-safe.js';

export const USAGE = `Usage:
  phi-rx run [--config agent.toml] [--json] [--sessions DIR] [--no-save] [--script turns.json] "prompt"
  phi-rx replay session.json [--json]
  phi-rx sessions [--sessions DIR]

Without --config, a key in ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY picks the model;
with none, the run is a scripted demo. Ctrl-C aborts the run; a second Ctrl-C exits.
Sessions are stored in --sessions, $PHI_RX_SESSIONS or ~/.phi-rx/sessions.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean', default: false },
  sessions: { type: 'string' },
  'no-save': { type: 'boolean', default: false },
  script: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The options each command takes; any other is bad usage. */
const TAKES: Readonly<Record<string, readonly (keyof typeof OPTIONS)[]>> = {
  run: ['config', 'json', 'sessions', 'no-save', 'script', 'help'],
  replay: ['json', 'help'],
  sessions: ['sessions', 'help'],
};

/** The CLI: returns the exit code (0 done, 1 the run failed, 2 bad usage, 130 aborted). */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof OPTIONS; tokens: true }>>;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, options: OPTIONS, tokens: true });
  } catch (e) {
    // An unknown option, a missing option value: node:util says which.
    return usage(io, (e as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  if (values.help || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const takes = command === undefined ? undefined : TAKES[command];
  const misplaced = takes && tokens.find((t) => t.kind === 'option' && !takes.includes(t.name as keyof typeof OPTIONS));
  if (misplaced && misplaced.kind === 'option') return usage(io, `${command} does not take ${misplaced.rawName}`);
  switch (command) {
    case 'run': {
      const prompt = positionals.join(' ').trim();
      if (!prompt) return usage(io, 'run needs a prompt');
      return runCommand(
        {
          prompt,
          json: values.json,
          save: !values['no-save'],
          sessions: sessionsDir(values.sessions, io.env),
          ...(values.config ? { config: values.config } : {}),
          ...(values.script ? { script: path.resolve(values.script) } : {}),
        },
        io,
      );
    }
    case 'replay':
      if (positionals.length !== 1) return usage(io, 'replay needs one session file');
      return replayCommand(positionals[0]!, values.json, io);
    case 'sessions':
      if (positionals.length > 0) return usage(io, `sessions takes no arguments (got "${positionals[0]}")`);
      return sessionsCommand(sessionsDir(values.sessions, io.env), io);
    default:
      return usage(io, command ? `unknown command "${command}"` : 'no command');
  }
}

function usage(io: Io, problem: string): number {
  io.stderr.write(`phi-rx: ${terminalSafe(problem)}\n\n${USAGE}\n`);
  return 2;
}
