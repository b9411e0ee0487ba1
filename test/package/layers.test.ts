import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The dependency direction of docs/architecture.md, checked on every relative import of src/: the core never
// imports from the layers built on it, and general-purpose operators never import from the loop.
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** The folders of the core: what agentLoop is made of, and what it stands on. */
const CORE = ['types', 'context', 'util', 'sources', 'providers', 'output', 'operators', 'loop', 'tools', 'session', 'view', 'skills'];
/** What is built on the core: the facade, best-of-N, the wires, the plug-ins and the Node-only entry points. */
const ABOVE_CORE = ['agent', 'parallel', 'protocols', 'integrations', 'config', 'cli', 'node', 'testing'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.tsx?$/.test(entry.name) ? [file] : [];
  });
}

/** The top folder under src/ of a file (`''` for src/index.ts). */
const topFolder = (file: string) => {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : '';
};

/** Every relative import of a file (static, type-only, re-export, dynamic with a literal), as `from → to` folders. */
function importsOf(file: string): Array<{ from: string; to: string; spec: string }> {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.map((spec) => ({ from: path.relative(src, file), to: path.relative(src, path.resolve(path.dirname(file), spec)), spec }));
}

const files = sourceFiles(src);
const edges = files.flatMap((file) => importsOf(file).map((edge) => ({ ...edge, fromTop: topFolder(file), toTop: edge.to.split(path.sep)[0]! })));

describe('the dependency direction of src/', () => {
  it('sees the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges.some((e) => e.fromTop === 'loop' && e.toTop === 'operators')).toBe(true);
  });

  it('the core imports nothing from the layers built on it', () => {
    const offenders = edges.filter((e) => CORE.includes(e.fromTop) && ABOVE_CORE.includes(e.toTop)).map((e) => `${e.from} → ${e.spec}`);
    expect(offenders).toEqual([]);
  });

  it('general-purpose operators import nothing from the loop', () => {
    const offenders = edges.filter((e) => e.fromTop === 'operators' && e.toTop === 'loop').map((e) => `${e.from} → ${e.spec}`);
    expect(offenders).toEqual([]);
  });

  it('every top folder of src/ has a place in the layers', () => {
    const folders = readdirSync(src, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.filter((f) => !CORE.includes(f) && !ABOVE_CORE.includes(f))).toEqual([]);
  });
});
