/**
 * Reading the GEP-5093 revision from a Gateway CRD, and crd-patch per
 * revision (--gep-revision): the schema written, and CRDs that already carry
 * routability left alone with the revision found named.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { runCrdPatch } from '../../src/cli/crd-patch.js';
import { GATEWAY_CRD_NAME, routabilityPatch } from '../../src/crd/patch.js';
import {
  classifyRoutabilitySchema,
  revisionOfGatewayCrd,
  routabilityPlaces,
} from '../../src/crd/gep-revision.js';
import {
  experimentalRoutabilitySchema,
  provisionalRoutabilitySchema,
  UPSTREAM_ROUTABILITY_MESSAGE,
  UPSTREAM_ROUTABILITY_RULE,
} from '../../src/crd/schemas.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { CRD_FIXTURES, gatewayCrdWith, storedGatewayCrd } from '../kit/gateway-crd.js';
import { GEP_5093_UPSTREAM } from '../kit/upstream-fixtures.js';
import { runCli } from './run-cli.js';

const UPSTREAM_TEXT = join(GEP_5093_UPSTREAM, 'crd-validation.md');

describe('the schema of each revision', () => {
  it("experimental is upstream's rule and message, verbatim", () => {
    const text = readFileSync(UPSTREAM_TEXT, 'utf8');
    const rule = /^- CEL rule: `(.+)`$/m.exec(text)?.[1];
    const message = /^- message: `(.+)`$/m.exec(text)?.[1];
    expect(rule).toBeDefined();
    expect(UPSTREAM_ROUTABILITY_RULE).toBe(rule);
    expect(UPSTREAM_ROUTABILITY_MESSAGE).toBe(message);
    expect(text).toContain('`maxLength: 253`');
    expect(experimentalRoutabilitySchema()).toMatchObject({
      type: 'string',
      maxLength: 253,
      'x-kubernetes-validations': [{ rule, message }],
    });
    expect(experimentalRoutabilitySchema()).not.toHaveProperty('pattern');
  });

  it('each schema is read back as its own revision', () => {
    expect(classifyRoutabilitySchema(provisionalRoutabilitySchema())).toMatchObject({
      kind: 'revision',
      revision: 'provisional',
    });
    expect(classifyRoutabilitySchema(experimentalRoutabilitySchema())).toEqual({
      kind: 'revision',
      revision: 'experimental',
      basis: "upstream's schema (its CEL rule and message, maxLength 253)",
    });
  });
});

describe('classifying a routability schema someone else wrote', () => {
  const rule = (r: string): Record<string, unknown> => ({
    type: 'string',
    maxLength: 253,
    'x-kubernetes-validations': [{ rule: r }],
  });
  const cases: [string, unknown, string][] = [
    ["upstream's rule, reformatted", rule(UPSTREAM_ROUTABILITY_RULE.replaceAll(' ', '\n  ')), 'experimental'],
    ['no validation (admits "")', { type: 'string' }, 'experimental'],
    [
      'a CEL rule starting with size(self) == 0 ||',
      rule("size(self)==0 || self.startsWith('x')"),
      'experimental',
    ],
    ["a CEL rule starting with self == '' ||", rule("self == '' || self == 'Cluster'"), 'experimental'],
    ['an enum with ""', { type: 'string', enum: ['', 'Cluster'] }, 'experimental'],
    ['a pattern that admits ""', { type: 'string', pattern: '^(|Cluster)$' }, 'experimental'],
    ['a CEL rule it cannot evaluate', rule("self in ['Cluster', 'External']"), 'unrecognised'],
    ['an enum without ""', { type: 'string', enum: ['External', 'Cluster'] }, 'unrecognised'],
    ['another pattern that rejects ""', { type: 'string', pattern: '^(External|Cluster)$' }, 'unrecognised'],
    ['minLength 1', { type: 'string', minLength: 1 }, 'unrecognised'],
    ['not a string', { type: 'integer' }, 'unrecognised'],
    ['not an object', 'routability', 'unrecognised'],
  ];
  it.each(cases)('%s', (_name, schema, expected) => {
    const verdict = classifyRoutabilitySchema(schema);
    expect(verdict.kind === 'revision' ? verdict.revision : verdict.kind).toBe(expected);
  });
});

describe('the revision of a whole Gateway CRD', () => {
  it('the v1.6.1 CRDs carry no routability; crd-patch output carries the revision asked for', () => {
    for (const channel of ['standard', 'experimental'] as const) {
      expect(revisionOfGatewayCrd(gatewayCrdWith('none', channel))).toEqual({
        kind: 'field-missing',
        versions: ['v1', 'v1beta1'],
      });
      for (const revision of ['provisional', 'experimental'] as const)
        expect(revisionOfGatewayCrd(gatewayCrdWith(revision, channel))).toMatchObject({
          kind: 'revision',
          revision,
          missing: [],
        });
    }
  });

  it('versions that disagree are undecidable; a version that is not served does not count', () => {
    const mixed = gatewayCrdWith('provisional') as unknown as {
      spec: { versions: Record<string, unknown>[] };
    };
    const experimental = gatewayCrdWith('experimental') as unknown as typeof mixed;
    mixed.spec.versions[1] = experimental.spec.versions[1]!;
    expect(revisionOfGatewayCrd(mixed)).toMatchObject({
      kind: 'undecidable',
      detail: expect.stringMatching(/provisional in v1 spec.*; experimental in v1beta1 spec/),
    });
    mixed.spec.versions[1]!['served'] = false;
    expect(revisionOfGatewayCrd(mixed)).toMatchObject({ kind: 'revision', revision: 'provisional' });
  });

  it('a CRD with the field in some places only follows them and names the others', () => {
    const partial = gatewayCrdWith('experimental');
    const places = routabilityPlaces(partial);
    expect(places.map((p) => p.label)).toEqual([
      'v1 spec.addresses[].routability',
      'v1 status.addresses[].routability',
      'v1beta1 spec.addresses[].routability',
      'v1beta1 status.addresses[].routability',
    ]);
    const v1beta1 = (partial as unknown as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } })
      .spec.versions[1]!;
    const status = (
      v1beta1.schema.openAPIV3Schema as {
        properties: {
          status: { properties: { addresses: { items: { properties: Record<string, unknown> } } } };
        };
      }
    ).properties.status.properties.addresses.items.properties;
    delete status['routability'];
    expect(revisionOfGatewayCrd(partial)).toMatchObject({
      kind: 'revision',
      revision: 'experimental',
      missing: ['v1beta1 status.addresses[].routability'],
    });
  });
});

describe('crd-patch --gep-revision', () => {
  it('prints the experimental patch: the same guards and paths, upstream schema', async () => {
    const r = await runCli(runCrdPatch, ['--gep-revision', 'experimental']);
    expect(r.code).toBe(0);
    const ops = JSON.parse(r.stdout) as { op: string; path: string; value: unknown }[];
    expect(ops).toEqual(routabilityPatch('experimental'));
    expect(ops.map((o) => o.path)).toEqual(routabilityPatch('provisional').map((o) => o.path));
    for (const op of ops.slice(6)) expect(op.value).toEqual(experimentalRoutabilitySchema());
    // The default stays the provisional schema.
    const plain = await runCli(runCrdPatch, []);
    expect(JSON.parse(plain.stdout)).toEqual(routabilityPatch('provisional'));
  });

  it('refuses auto and unknown revisions (exit 2), and ignores the serve environment variable', async () => {
    for (const value of ['auto', 'Experimental', '']) {
      const r = await runCli(runCrdPatch, ['--gep-revision', value]);
      expect({ value, code: r.code }).toEqual({ value, code: 2 });
      expect(r.stderr).toContain('must be one of provisional, experimental');
    }
    const env = await runCli(runCrdPatch, [], { env: { ROUTABILITY_WEBHOOK_GEP_REVISION: 'auto' } });
    expect(env.code).toBe(0);
    expect(JSON.parse(env.stdout)).toEqual(routabilityPatch('provisional'));
    const help = await runCli(runCrdPatch, ['--help']);
    expect(help.stdout).toContain('--gep-revision REV');
  });

  it('--apply writes the revision asked for; a CRD that has routability is left alone and named', async () => {
    const file = join(CRD_FIXTURES, 'standard-gateways.yaml');
    const experimental = await runCli(runCrdPatch, ['--apply', file, '--gep-revision', 'experimental']);
    expect(experimental.code).toBe(0);
    expect(experimental.stderr).toBe('');
    const patched = YAML.parse(experimental.stdout) as unknown;
    expect(revisionOfGatewayCrd(patched)).toMatchObject({ kind: 'revision', revision: 'experimental' });
    for (const place of routabilityPlaces(patched))
      expect(place.schema).toEqual(experimentalRoutabilitySchema());

    // Asking for provisional on it changes nothing and says what it found.
    const again = await runCli(runCrdPatch, ['--apply', '-'], { stdin: experimental.stdout });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(experimental.stdout);
    expect(again.stderr).toBe(
      "stdin: already has routability: experimental revision, upstream's schema (its CEL rule and message, maxLength 253): " +
        'unchanged; the provisional schema was not written: an existing routability schema is never replaced\n',
    );
    const same = await runCli(runCrdPatch, ['--apply', '-', '--gep-revision', 'experimental'], {
      stdin: experimental.stdout,
    });
    expect(same.stdout).toBe(experimental.stdout);
    expect(same.stderr).toMatch(/^stdin: already has routability: experimental revision, .*: unchanged\n$/);
  });
});

describe('crd-patch --patch-cluster --gep-revision', () => {
  let fake: FakeApiServer | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('patches with the experimental schema, then names the revision found and leaves it', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('none'));
    const first = await runCli(runCrdPatch, [
      '--patch-cluster',
      '--gep-revision',
      'experimental',
      '--kubeconfig',
      fake.kubeconfigPath,
    ]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^crd\/gateways.gateway.networking.k8s.io patched: added routability to spec.addresses and status.addresses of v1, v1beta1, experimental revision \(http:\/\/127.0.0.1:\d+\)\n$/,
    );
    const live = fake.crds.get(GATEWAY_CRD_NAME)!;
    expect(live.metadata['generation']).toBe(2);
    expect(revisionOfGatewayCrd(live)).toMatchObject({ kind: 'revision', revision: 'experimental' });

    const second = await runCli(runCrdPatch, ['--patch-cluster', '--kubeconfig', fake.kubeconfigPath]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      /^crd\/gateways.gateway.networking.k8s.io already has routability: experimental revision, upstream's schema .*: unchanged; the provisional schema was not written: an existing routability schema is never replaced \(http:/,
    );
    expect(fake.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });
});
