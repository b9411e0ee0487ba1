#!/usr/bin/env node
import type { Io } from './commands.js';
import { main } from './cli.js';
import { terminalSafe } from './terminal-safe.js';

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
    process.stderr.write(`phi-rx: ${terminalSafe(e instanceof Error ? e.message : String(e))}\n`);
    process.exitCode = 1;
  },
);
