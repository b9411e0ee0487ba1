/**
 * Real PostgreSQL and Redis servers for tests: each started on a free loopback port in a temp
 * directory, stopped (and the directory removed) by the returned `stop`. PostgreSQL refuses to
 * run as root, so as root it runs as the `postgres` user (`runuser`), in a directory it owns.
 *
 * `serversAvailable()` says whether the binaries are here; tests skip visibly when they are not,
 * unless PHI_RX_REQUIRE_SERVERS=1 (set by .ci/run), where a missing binary is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** Servers still running, killed if this process exits without stopping them (a crashed test or bench). */
const running = new Map<ChildProcess, string>();
process.once('exit', () => {
  for (const [child, dir] of running) {
    signalGroup(child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The directory holding `initdb` and `postgres`, or undefined. */
export function postgresBinDir(): string | undefined {
  const fromPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return join(fromPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

export function redisServerBinary(): string | undefined {
  return spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim() || undefined;
}

/**
 * Why the tests needing `what` cannot run here, or undefined when they can. Throws instead when
 * PHI_RX_REQUIRE_SERVERS=1: in CI a missing server is a failure, not a skip.
 */
export function missingServer(what: 'postgres' | 'redis'): string | undefined {
  const missing =
    what === 'postgres'
      ? postgresBinDir() ? undefined : 'PostgreSQL binaries (initdb, postgres) not found — apt-get install postgresql'
      : redisServerBinary() ? undefined : 'redis-server not found — apt-get install redis-server';
  if (missing && process.env['PHI_RX_REQUIRE_SERVERS'] === '1') throw new Error(`PHI_RX_REQUIRE_SERVERS=1 but ${missing}`);
  return missing;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A fresh PostgreSQL cluster (trust auth, fsync off) on 127.0.0.1; database `postgres`, user `postgres`. */
export async function startPostgres(): Promise<RunningServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL binaries not found');
  const dir = mkdtempSync(join(tmpdir(), 'phi-rx-pg-'));
  const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
    isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  if (isRoot) chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  const [cmd, args] = asPostgres(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200',
  ]);
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const server = await awaitReady(child, dir, /database system is ready to accept connections/, 'postgres');
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop: server };
}

/** A fresh redis-server without persistence on 127.0.0.1. */
export async function startRedis(): Promise<RunningServer> {
  const binary = redisServerBinary();
  if (!binary) throw new Error('redis-server not found');
  const dir = mkdtempSync(join(tmpdir(), 'phi-rx-redis-'));
  const port = await freePort();
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--loglevel', 'notice', '--logfile', ''],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stop = await awaitReady(child, dir, /Ready to accept connections/, 'redis-server');
  return { port, url: `redis://127.0.0.1:${port}`, stop };
}

/** Resolves with a `stop` once `ready` appears in the server's output; rejects if it exits first. */
function awaitReady(child: ChildProcess, dir: string, ready: RegExp, name: string): Promise<() => Promise<void>> {
  running.set(child, dir);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // The whole process group: runuser and the server with its workers. SIGINT is PostgreSQL's fast shutdown.
      signalGroup(child, 'SIGINT');
      const killer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready.test(output)) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(stop);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      running.delete(child);
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`${name} exited before it was ready (${code ?? signal}): ${output}`));
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

function uidOf(user: string): number {
  return Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
}
function gidOf(user: string): number {
  return Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
}
