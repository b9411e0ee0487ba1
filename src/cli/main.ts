#!/usr/bin/env node
import path from 'node:path';
import { parseArgs } from 'node:util';
import { replayCommand, runCommand, sessionsCommand, sessionsDir, type Io } from './commands.js';

const USAGE = `Usage:
  phi-rx run [--config agent.toml] [--json] [--sessions DIR] [--no-save] [--script turns.json] "prompt"
  phi-rx replay session.json [--json]
  phi-rx sessions [--sessions DIR]

Without --config, a key in ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY picks the model;
with none, the run is a scripted demo. Ctrl-C aborts the run; a second Ctrl-C exits.
Sessions are stored in --sessions, $PHI_RX_SESSIONS or ~/.phi-rx/sessions.`;

/** The CLI: returns the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      json: { type: 'boolean', default: false },
      sessions: { type: 'string' },
      'no-save': { type: 'boolean', default: false },
      script: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
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
      return sessionsCommand(sessionsDir(values.sessions, io.env), io);
    default:
      return usage(io, command ? `unknown command "${command}"` : 'no command');
  }
}

function usage(io: Io, problem: string): number {
  io.stderr.write(`phi-rx: ${problem}\n\n${USAGE}\n`);
  return 2;
}

const io: Io = {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onInterrupt: (handler) => process.on('SIGINT', handler),
  exit: (code) => process.exit(code),
};

main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`phi-rx: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
