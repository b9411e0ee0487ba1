import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../../types/errors.js';
import type { SpecFetcher } from './spec-fetch.js';

/** Where a spec came from: what its `$ref`s may read follows from it. */
export type SpecOrigin =
  | { kind: 'url' }
  | { kind: 'inline' }
  /** A file on disk: file `$ref`s resolve, within `root` only. */
  | { kind: 'file'; root: string };

/** The one resolver swagger-parser is given (its own `file` and `http` resolvers are turned off). */
export interface RefResolver {
  order: number;
  canRead: boolean;
  read(file: { url: string }): Promise<string | Buffer>;
  /** The first failure of `read`: the parser keeps only "Error reading file", this keeps why. */
  failure: Error | undefined;
}

/**
 * How the `$ref`s of one spec are read: http(s) through the checked {@link SpecFetcher}; files
 * only for a spec loaded from disk and only inside its root (after symlinks are followed); any
 * other scheme never. A spec fetched from a URL or passed inline cannot make this process read a file.
 */
export function refResolver(origin: SpecOrigin, fetcher: SpecFetcher): RefResolver {
  const resolver: RefResolver = {
    order: 1,
    canRead: true,
    failure: undefined,
    async read(file) {
      try {
        return await readRef(file.url, origin, fetcher);
      } catch (error) {
        resolver.failure ??= error instanceof Error ? error : new Error(String(error));
        throw error;
      }
    },
  };
  return resolver;
}

async function readRef(url: string, origin: SpecOrigin, fetcher: SpecFetcher): Promise<string | Buffer> {
  const scheme = /^([a-z][a-z\d+.-]+):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') return fetcher.fetchText(new URL(url), `$ref "${url}"`);
  if (scheme !== undefined && scheme !== 'file') {
    throw new Error(`$ref "${url}": only http and https${origin.kind === 'file' ? ' and local file' : ''} $refs are resolved`);
  }
  if (origin.kind !== 'file') {
    const from = origin.kind === 'url' ? 'fetched from a URL' : 'passed inline';
    throw new Error(
      `$ref "${url}" points to a local file, and a spec ${from} may not read files (file $refs resolve only for a spec loaded with openApiToolsFromFile, within its baseDir)`,
    );
  }
  return readInside(url, origin.root, scheme === 'file');
}

async function readInside(url: string, root: string, isFileUrl: boolean): Promise<Buffer> {
  let target: string;
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    target = await realpath(isFileUrl ? fileURLToPath(url) : decodeURIComponent(url));
  } catch (error) {
    throw new Error(`$ref "${url}": cannot read it: ${errorMessage(error)}`, { cause: error });
  }
  const relative = path.relative(realRoot, target);
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw new Error(`$ref "${url}" is outside baseDir ${realRoot} (the spec's directory unless config.baseDir says otherwise)`);
  }
  return readFile(target);
}
