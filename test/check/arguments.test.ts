/**
 * `check PATH...` takes files and folders as arguments, as linters do (pre-commit appends the
 * staged file names), alongside -f; other commands still refuse arguments. `--fail-on warning`
 * makes warnings fail the check.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { check, RANGES } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'check-args-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('check PATH...', () => {
  it('files as arguments are read as -f reads them', async () => {
    const args = await check(['manifests/gateways.yaml', 'manifests/status.yaml', ...RANGES]);
    const flags = await check(['-f', 'manifests/gateways.yaml', '-f', 'manifests/status.yaml', ...RANGES]);
    expect(args.code).toBe(1);
    expect(args).toEqual(flags);
    expect(args.stdout).toMatch(/in 2 files/);
  });

  it('folders too, and -f inputs come first, then the arguments', async () => {
    const mixed = await check(['manifests/status.yaml', '-f', 'manifests/nested', ...RANGES]);
    const flags = await check(['-f', 'manifests/nested', '-f', 'manifests/status.yaml', ...RANGES]);
    expect(mixed).toEqual(flags);
    expect(mixed.stdout).toMatch(/^checked 2 Gateways in 3 files: /m);
    const reversed = await check([
      '-f',
      'manifests/status.yaml',
      '-f',
      'manifests/nested',
      '-o',
      'json',
      ...RANGES,
    ]);
    const order = (out: string) =>
      (JSON.parse(out) as { files: { path: string }[] }).files.map((f) => f.path);
    const mixedJson = await check([
      'manifests/status.yaml',
      '-f',
      'manifests/nested',
      '-o',
      'json',
      ...RANGES,
    ]);
    expect(order(mixedJson.stdout)).toEqual([
      'manifests/nested/deeper/deployment.yml',
      'manifests/nested/deeper/valid.yml',
      'manifests/status.yaml',
    ]);
    expect(order(reversed.stdout)).not.toEqual(order(mixedJson.stdout));
  });

  it('after --, a file whose name starts with a dash', async () => {
    writeFileSync(join(scratch, '-gw.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
    const r = await check([...RANGES, '--', '-gw.yaml'], { cwd: scratch });
    expect(r.stdout).toBe(
      'checked 0 Gateways in 1 file: 0 violations, 0 warnings; skipped 1 other document\n',
    );
    expect(r.code).toBe(0);
  });

  it('a missing file given as an argument is an input error (exit 2), the others still checked', async () => {
    const r = await check(['missing.yaml', 'manifests/gateways.yaml', ...RANGES]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^missing\.yaml: error: no such file or directory$/m);
    expect(r.stdout).toMatch(/^manifests\/gateways\.yaml:\d+:\d+: /m);
  });

  it.each([
    ['review', ['review', 'x.json', '--service-cidr', '10.96.0.0/12']],
    ['policy', ['policy', 'x']],
  ])('%s still refuses arguments (declared per command)', async (name, argv) => {
    const stderr = new PassThrough();
    const chunks: Buffer[] = [];
    stderr.on('data', (c: Buffer) => chunks.push(c));
    const code = await main(argv, {
      stdin: Readable.from([]),
      stdout: new PassThrough(),
      stderr,
      env: {},
      cwd: scratch,
    });
    expect(code).toBe(2);
    expect(Buffer.concat(chunks).toString()).toMatch(
      new RegExp(`^routability-webhook ${name}: Unexpected argument 'x(\\.json)?'`),
    );
  });
});

describe('--fail-on', () => {
  const WARNINGS_ONLY = ['manifests/status.yaml', ...RANGES];

  it('violation (the default): warnings never fail the check', async () => {
    expect((await check(WARNINGS_ONLY)).code).toBe(0);
    expect((await check([...WARNINGS_ONLY, '--fail-on', 'violation'])).code).toBe(0);
  });

  it('warning: warnings fail it with exit 1, in every format and from the environment', async () => {
    const r = await check([...WARNINGS_ONLY, '--fail-on', 'warning']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^manifests\/status\.yaml:\d+:\d+: warning: /m);
    const json = await check([...WARNINGS_ONLY, '--fail-on', 'warning', '-o', 'json']);
    expect((JSON.parse(json.stdout) as { summary: { exitCode: number } }).summary.exitCode).toBe(1);
    const env = await check(WARNINGS_ONLY, { env: { ROUTABILITY_WEBHOOK_FAIL_ON: 'warning' } });
    expect(env.code).toBe(1);
  });

  it('warning: violations still 1, input errors still 2', async () => {
    expect((await check(['manifests/gateways.yaml', ...RANGES, '--fail-on', 'warning'])).code).toBe(1);
    expect((await check(['missing.yaml', ...WARNINGS_ONLY, '--fail-on', 'warning'])).code).toBe(2);
  });
});
