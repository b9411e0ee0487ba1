#!/usr/bin/env node
// Mutation testing of the safety-critical set (issue 36): `npm run mutate`.
//
// The set is split into groups, each a few source files and the test files that reach them, so each mutant runs
// only the tests that cover it (Stryker's perTest coverage) among a few files, not the whole suite. Each group keeps
// its results in reports/mutation/<group>.json, Stryker's incremental report, committed: a group whose source and
// test files are unchanged since that report is not run again; a changed one runs in Stryker's incremental mode, which
// re-tests only the mutants in changed code or covered by changed tests. Then every file's score is checked.
//
//   npm run mutate                          every group that changed, then the scores
//   npm run mutate -- --group breaker       one group (names below), e.g. while writing its tests
//   npm run mutate -- --force               run every group (Stryker's incremental mode still reuses results)
//   npm run mutate -- --check               only check the scores of the committed reports
//
// Score of a file = (killed + timed out) / (killed + timed out + survived + no coverage), in %. Mutants that are
// equivalent (no test can tell them apart from the original) are marked in the source with a
// `// Stryker disable next-line <mutator>: <reason>` comment and listed in mutation.md; they do not count.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const reports = 'reports/mutation';
/** Lowest score (%) each file of the set must keep. */
const THRESHOLD = 90;

/** @type {{ name: string, mutate: string[], tests: string[], floor?: Record<string, number> }[]} */
export const groups = [
  {
    name: 'confinement',
    mutate: ['src/tools/paths.ts'],
    tests: ['test/tools/paths.test.ts', 'test/tools/read-file.test.ts', 'test/tools/write-edit.test.ts', 'test/tools/list-files.test.ts', 'test/tools/search.test.ts'],
  },
  { name: 'breaker', mutate: ['src/operators/circuit-breaker.ts'], tests: ['test/operators/circuit-breaker.test.ts'] },
  {
    name: 'transport-client',
    mutate: ['src/protocols/transport/from-event-stream.ts'],
    tests: ['test/protocols/transport/from-event-stream-client.test.ts', 'test/protocols/transport/from-event-stream-resume.test.ts'],
    // 89.4% (mutation.md): two survivors short of 90; raise the floor once they are killed.
    floor: { 'src/protocols/transport/from-event-stream.ts': 89 },
  },
  {
    name: 'turns',
    mutate: ['src/loop/stages/decide-next.ts', 'src/operators/filter-input.ts'],
    tests: ['test/loop/stages/decide-next.test.ts', 'test/loop/stages/decide-next-policies.test.ts', 'test/operators/filter-input.test.ts', 'test/operators/filter-input-order.test.ts'],
  },
];

const args = process.argv.slice(2);
const only = args.includes('--group') ? args[args.indexOf('--group') + 1] : undefined;
const force = args.includes('--force');
const checkOnly = args.includes('--check');
if (only !== undefined && !groups.some((g) => g.name === only)) {
  console.error(`mutate: no group "${only}"; groups: ${groups.map((g) => g.name).join(', ')}`);
  process.exit(2);
}

const read = (file) => readFileSync(path.join(root, file), 'utf8');
const reportOf = (group) => {
  const file = path.join(root, reports, `${group.name}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
};

/** Why a group must run: its report is missing or a source or test file differs from what the report saw. */
function staleness(group) {
  const report = reportOf(group);
  if (!report) return 'no report yet';
  for (const file of group.mutate) if (report.files?.[file]?.source !== read(file)) return `${file} changed`;
  for (const file of group.tests) if (report.testFiles?.[file]?.source !== read(file)) return `${file} changed`;
  return undefined;
}

let failed = false;
for (const group of groups) {
  if (only !== undefined && group.name !== only) continue;
  const why = force ? 'forced' : staleness(group);
  if (checkOnly || why === undefined) continue;
  console.log(`\nmutate: group ${group.name} (${why})`);
  const run = spawnSync(
    'npx',
    ['stryker', 'run', 'stryker.config.mjs', '--mutate', group.mutate.join(','), '--testFiles', group.tests.join(','),
      '--incremental', '--incrementalFile', `${reports}/${group.name}.json`],
    { cwd: root, stdio: 'inherit' },
  );
  if (run.status !== 0) {
    console.error(`mutate: Stryker failed for group ${group.name} (exit ${run.status})`);
    failed = true;
  }
}

const counted = { Killed: 'detected', Timeout: 'detected', Survived: 'undetected', NoCoverage: 'undetected' };
console.log('\nfile                                                 score  killed  survived  no cov  ignored  floor');
for (const group of groups) {
  if (only !== undefined && group.name !== only) continue;
  const report = reportOf(group);
  for (const file of group.mutate) {
    const mutants = report?.files?.[file]?.mutants ?? [];
    const count = (status) => mutants.filter((m) => m.status === status).length;
    const detected = mutants.filter((m) => counted[m.status] === 'detected').length;
    const total = mutants.filter((m) => counted[m.status] !== undefined).length;
    const score = total === 0 ? NaN : (100 * detected) / total;
    const floor = group.floor?.[file] ?? THRESHOLD;
    const ok = score >= floor;
    failed ||= !ok;
    console.log(
      `${file.padEnd(52)} ${Number.isNaN(score) ? '  n/a' : score.toFixed(1).padStart(5)}  ${String(detected).padStart(6)}  ${String(count('Survived')).padStart(8)}  ${String(count('NoCoverage')).padStart(6)}  ${String(count('Ignored')).padStart(7)}  ${String(floor).padStart(5)}${ok ? '' : '  BELOW'}`,
    );
  }
}
if (failed) {
  console.error(`\nmutate: a file scored below its floor (${THRESHOLD}% unless set), or Stryker failed: see above and mutation.md`);
  process.exit(1);
}
