/**
 * `review --gep-revision`: the offline answer follows the revision asked for,
 * on every case of upstream's CRD validation table and on the mutation's
 * default, exactly as the engine does for the server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CommandIO } from '../../src/io.js';
import { GEP_5093_UPSTREAM } from '../kit/upstream-fixtures.js';

const REVIEWS = join(import.meta.dirname, '..', 'fixtures', 'reviews');
const RANGES = ['--service-cidr', '10.96.0.0/12'];

interface Review {
  request: { object: { spec: { addresses: Record<string, unknown>[] } } };
}

async function review(args: string[], input: unknown) {
  const stdin = new PassThrough();
  stdin.end(JSON.stringify(input));
  const out = { stdout: '', stderr: '' };
  const stdout = new PassThrough().on('data', (d: Buffer) => (out.stdout += d.toString()));
  const stderr = new PassThrough().on('data', (d: Buffer) => (out.stderr += d.toString()));
  const io: CommandIO = { stdin, stdout, stderr, env: {}, cwd: process.cwd() };
  const code = await main(['review', ...args, ...RANGES], io);
  return { code, ...out };
}

function fixture(name: string): Review {
  return JSON.parse(readFileSync(join(REVIEWS, `${name}.json`), 'utf8')) as Review;
}

/** A CREATE of one address; by default inside the range, so that only `routability` decides. */
function createWith(routability: string, value = '10.96.0.9'): Review {
  const r = fixture('create-allowed');
  r.request.object.spec.addresses = [{ type: 'IPAddress', value, routability }];
  return r;
}

function patchOf(stdout: string): unknown {
  const response = (JSON.parse(stdout) as { response: { patch?: string } }).response;
  return response.patch === undefined
    ? []
    : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
}

describe('review --gep-revision', () => {
  it('the mutation defaults unset status routability to External (provisional) or "" (experimental)', async () => {
    const input = fixture('status-defaulting');
    const provisional = await review(['--webhook', 'mutate', '--gep-revision', 'provisional'], input);
    const experimental = await review(['--webhook', 'mutate', '--gep-revision', 'experimental'], input);
    const auto = await review(['--webhook', 'mutate'], input);
    expect([provisional.code, experimental.code, auto.code]).toEqual([0, 0, 0]);
    const values = (stdout: string) => (patchOf(stdout) as { value: unknown }[]).map((op) => op.value);
    expect(values(provisional.stdout)).toEqual(['External', 'External']);
    expect(values(experimental.stdout)).toEqual(['', '']);
    // auto offline is provisional: no cluster to follow.
    expect(auto.stdout).toBe(provisional.stdout);
  });

  it('External: allowed under provisional, refused under experimental with what to write instead', async () => {
    const provisional = await review(
      ['--gep-revision', 'provisional'],
      createWith('External', '203.0.113.9'),
    );
    const experimental = await review(
      ['--gep-revision', 'experimental'],
      createWith('External', '203.0.113.9'),
    );
    expect(JSON.parse(provisional.stdout).response.allowed).toBe(true);
    const refused = JSON.parse(experimental.stdout).response;
    expect(refused.allowed).toBe(false);
    expect(refused.status.message).toContain('spec.addresses[0].routability');
    expect(refused.status.message).toContain('"External"');
  });

  it('an unknown revision is exit 2 naming the choices', async () => {
    const r = await review(['--gep-revision', 'upstream'], createWith('Cluster'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--gep-revision/);
    expect(r.stderr).toMatch(/provisional/);
    expect(r.stderr).toMatch(/experimental/);
  });

  describe("upstream's CRD validation table", () => {
    const table = (
      JSON.parse(readFileSync(join(GEP_5093_UPSTREAM, 'crd-validation-cases.json'), 'utf8')) as {
        cases: { routability: string; crdAccepts: boolean }[];
      }
    ).cases;
    it.each(table)('spec routability $routability: allowed exactly when the CRD accepts it', async (c) => {
      const r = await review(['--gep-revision', 'experimental'], createWith(c.routability));
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).response.allowed).toBe(c.crdAccepts);
    });
  });
});
