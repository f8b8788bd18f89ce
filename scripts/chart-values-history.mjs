#!/usr/bin/env node
// Run after changing charts/gateway-routability-webhook/values.yaml (npm run chart:values). It
// 1. writes the chart's files/values-defaults.yaml: values.yaml without its comments. The templates
//    fill every value an upgrade with --reuse-values lacks (the old release's values replace the new
//    chart's values.yaml then) from it, so it must equal values.yaml (test/chart/reuse-values.test.ts);
// 2. copies every distinct earlier version of values.yaml out of git history into
//    test/fixtures/chart-values-history/, so the reuse-values test also runs in a copy without .git (a
//    `git archive`, a release tarball). Each file is named <commit date>-<short commit>.yaml after the
//    oldest commit with that content; SOURCES.md lists the commits. Files already there are kept.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VALUES = 'charts/gateway-routability-webhook/values.yaml';
const out = join(root, 'test', 'fixtures', 'chart-values-history');

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
// Files that differ only in comments or layout are the same values: one fixture.
const digest = (text) =>
  createHash('sha256')
    .update(JSON.stringify(parse(text)))
    .digest('hex');

const valuesText = readFileSync(join(root, VALUES), 'utf8');
const defaults = join(root, 'charts', 'gateway-routability-webhook', 'files', 'values-defaults.yaml');
writeFileSync(
  defaults,
  [
    '# values.yaml without its comments, written by scripts/chart-values-history.mjs (npm run chart:values):',
    '# the templates fill a value that an upgrade with --reuse-values lacks from here. Do not edit.',
    stringify(parse(valuesText), { lineWidth: 0 }),
  ].join('\n'),
);

mkdirSync(out, { recursive: true });
const current = digest(valuesText);
const have = new Set(
  readdirSync(out)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => digest(readFileSync(join(out, f), 'utf8'))),
);
// Oldest first, so a content that came back later keeps the name of its first commit.
const commits = git('log', '--reverse', '--format=%H %cs %s', '--', VALUES)
  .trim()
  .split('\n')
  .filter(Boolean);
const rows = [];
for (const line of commits) {
  const [commit, date, ...subject] = line.split(' ');
  let text;
  try {
    text = git('show', `${commit}:${VALUES}`);
  } catch {
    continue; // the commit deleted the file
  }
  const sum = digest(text);
  if (sum === current || have.has(sum)) continue;
  have.add(sum);
  const name = `${date}-${commit.slice(0, 12)}.yaml`;
  writeFileSync(join(out, name), text);
  rows.push(
    `| \`${name}\` | ${commit} | ${date} | ${subject.join(' ').slice(0, 90).replaceAll('|', '\\|')} |`,
  );
}
const sources = join(out, 'SOURCES.md');
const head = [
  '# Earlier chart values',
  '',
  `Each file is \`${VALUES}\` as of the commit named, copied by \`scripts/chart-values-history.mjs\``,
  "(this repository's own history, same licence as the repository).",
  '',
  '| file | commit | date | subject |',
  '|---|---|---|---|',
];
const before = existsSync(sources) ? readFileSync(sources, 'utf8').trimEnd().split('\n') : head;
writeFileSync(sources, [...before, ...rows, ''].join('\n'));
console.log(`${rows.length} new earlier values file(s) in ${out}`);
