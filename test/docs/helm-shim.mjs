// The `helm` a doc example calls (test/docs/shims.ts puts it first on PATH). It models a release the
// way helm keeps one, so that a pasted `helm upgrade` is judged by what it really does:
//
// - `install` and `upgrade` become `helm template` with the same chart and flags; the release's
//   values (every --set*, -f) are kept in .helm/<release>.json of the scratch folder and the rendered
//   manifests in .helm/<release>.yaml, for `doc-rendered` (below) to check.
// - `upgrade --reuse-values` (or --reset-then-reuse-values) renders with the release's earlier values
//   first, then the new ones, as helm merges them.
// - `upgrade` of an installed release with neither --reuse-values nor a values file fails: helm would
//   reset every value not on that command line (the failurePolicy, the namespace selector), which is
//   never what a doc means.
// - `uninstall` forgets the release.
//
// `doc-rendered RELEASE CHECK...` (the same file, by its other name) checks the last rendering of a
// release. A CHECK is `Kind:path=value` (the value at the dotted path, as a string), `Kind:path~value`
// (an array there contains it; `=undefined` when nothing is there), `Kind:path!~value` (it does not) or `!Kind` (no object of that kind).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const HELM = process.env.DOC_HELM;
const YAML = (await import(pathToFileURL(process.env.DOC_YAML_MODULE).href)).default;
const STATE = join(process.cwd(), '.helm');
const VALUE_FLAGS = ['--set', '--set-string', '--set-json', '--set-file', '--set-literal', '-f', '--values'];
const DROP = [
  '--create-namespace',
  '--install',
  '--wait',
  '--atomic',
  '--reuse-values',
  '--reset-then-reuse-values',
];

const fail = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};
const statePath = (release, ext) => join(STATE, `${release}.${ext}`);

/** Splits a command line into its value flags (kept as pairs, files made absolute) and the rest. */
function split(args) {
  const values = [];
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.indexOf('=');
    const flag = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (VALUE_FLAGS.includes(flag)) {
      const value = flag === a ? args[++i] : a.slice(eq + 1);
      if (value === undefined) fail(`helm: ${flag} needs a value`);
      values.push(flag, flag === '-f' || flag === '--values' ? resolve(value) : value);
    } else rest.push(a);
  }
  return { values, rest };
}

function deploy(args) {
  const command = args[0];
  const reuse = args.includes('--reuse-values') || args.includes('--reset-then-reuse-values');
  const { values, rest } = split(args.slice(1).filter((a) => !DROP.includes(a)));
  const positional = rest.filter(
    (a, i) => !a.startsWith('-') && !(i > 0 && ['-n', '--namespace', '--version'].includes(rest[i - 1])),
  );
  const [release, chart] = positional;
  if (!release || !chart) fail(`helm ${command}: give a release name and a chart`);
  const earlier = existsSync(statePath(release, 'json'))
    ? JSON.parse(readFileSync(statePath(release, 'json'), 'utf8'))
    : undefined;
  if (command === 'upgrade' && earlier && !reuse && !values.some((v) => v === '-f' || v === '--values'))
    fail(
      `helm upgrade ${release} without --reuse-values or a values file resets every value not on this command line (${earlier.join(' ')})`,
    );
  const all = [...(reuse && earlier ? earlier : []), ...values];
  const r = spawnSync(HELM, ['template', ...rest, ...all], {
    stdio: ['inherit', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  mkdirSync(STATE, { recursive: true });
  writeFileSync(statePath(release, 'json'), JSON.stringify(all));
  writeFileSync(statePath(release, 'yaml'), r.stdout);
}

function at(object, path) {
  return path.split('.').reduce((o, key) => (o === undefined || o === null ? undefined : o[key]), object);
}

function check(release, checks) {
  if (!existsSync(statePath(release, 'yaml')))
    fail(`doc-rendered: no helm install or upgrade of ${release} ran`);
  const docs = YAML.parseAllDocuments(readFileSync(statePath(release, 'yaml'), 'utf8'))
    .map((d) => d.toJS())
    .filter((d) => d)
    // What install and upgrade create: not the hooks of other events (helm test, pre-delete).
    .filter((d) => {
      const hooks = d.metadata?.annotations?.['helm.sh/hook'];
      return (
        hooks === undefined || hooks.split(',').some((h) => /^(pre|post)-(install|upgrade)$/.test(h.trim()))
      );
    });
  const problems = [];
  for (const c of checks) {
    if (c.startsWith('!') && !c.includes(':')) {
      const found = docs.filter((d) => d.kind === c.slice(1)).length;
      if (found > 0) problems.push(`${c}: ${found} rendered`);
      continue;
    }
    const m = /^(\w+):([\w.-]+)(=|!~|~)(.*)$/.exec(c);
    if (!m) fail(`doc-rendered: cannot read the check "${c}"`);
    const [, kind, path, op, want] = m;
    const objects = docs.filter((d) => d.kind === kind);
    if (objects.length !== 1) {
      problems.push(`${c}: ${objects.length} objects of kind ${kind}`);
      continue;
    }
    const got = at(objects[0], path);
    const ok =
      op === '='
        ? String(got) === want
        : Array.isArray(got) && got.map(String).includes(want) === (op === '~');
    if (!ok) problems.push(`${c}: the rendering has ${JSON.stringify(got)}`);
  }
  if (problems.length > 0)
    fail(
      `doc-rendered ${release}: values in force ${readFileSync(statePath(release, 'json'), 'utf8')}\n  ${problems.join('\n  ')}`,
    );
}

const args = process.argv.slice(2);
if (args[0] === '--doc-rendered') check(args[1], args.slice(2));
else if (args[0] === 'install' || args[0] === 'upgrade') deploy(args);
else if (args[0] === 'uninstall') {
  const release = args
    .slice(1)
    .find((a, i, all) => !a.startsWith('-') && !['-n', '--namespace'].includes(all[i - 1]));
  rmSync(statePath(release, 'json'), { force: true });
  rmSync(statePath(release, 'yaml'), { force: true });
  process.stdout.write(`release "${release}" uninstalled\n`);
} else {
  const r = spawnSync(HELM, args, { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
