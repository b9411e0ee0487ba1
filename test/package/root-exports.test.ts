import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The root entry re-exports many files. When two of them export one name, TypeScript keeps the explicit
// re-export and silently drops the other (or drops both, for two `export *`): a user reads the docs of
// one function and gets another. This lists every name the root entry offers, with the file it comes from.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(root, 'src/index.ts');

/** Every export of one re-export statement of the root entry: name → the file that declares it. */
function exportsOfStatement(checker: ts.TypeChecker, statement: ts.ExportDeclaration): Array<[string, string]> {
  const moduleSymbol = statement.moduleSpecifier && checker.getSymbolAtLocation(statement.moduleSpecifier);
  if (!moduleSymbol) return [];
  const named = statement.exportClause && ts.isNamedExports(statement.exportClause) ? statement.exportClause.elements.map((e) => e.name.text) : undefined;
  return checker
    .getExportsOfModule(moduleSymbol)
    .filter((symbol) => named === undefined || named.includes(symbol.name))
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const file = target.declarations?.[0]?.getSourceFile().fileName ?? '?';
      return [symbol.name, path.relative(root, file)];
    });
}

function rootExports(): Map<string, Set<string>> {
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const byName = new Map<string, Set<string>>();
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    for (const [name, file] of exportsOfStatement(checker, statement)) byName.set(name, (byName.get(name) ?? new Set()).add(file));
  }
  return byName;
}

describe('the root entry', () => {
  const names = rootExports();

  it('offers the loop, its stages, the operators and the facade', () => {
    for (const name of ['agentLoop', 'BasicAgent', 'decideNext', 'retryBackoff', 'loopState', 'textDeltas', 'transcript']) expect(names.has(name), name).toBe(true);
    expect(names.size).toBeGreaterThan(200);
  });

  it('has no name exported from two different files', () => {
    const twice = [...names].filter(([, files]) => files.size > 1).map(([name, files]) => `${name}: ${[...files].join(', ')}`);
    expect(twice).toEqual([]);
  });
});
