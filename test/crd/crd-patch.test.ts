import { describe, expect, it, beforeAll, afterEach } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { Ajv } from 'ajv';
import { runCrdPatch } from '../../src/cli/crd-patch.js';
import { applyJsonPatch, routabilityPatch } from '../../src/crd/patch.js';
import { FieldPath } from '../../src/rules/field-path.js';
import {
  checkRoutabilitySyntax,
  ROUTABILITY_MAX_LENGTH,
  ROUTABILITY_PATTERN,
} from '../../src/rules/routability.js';
import { FakeApiServer, TOKEN } from '../kit/fake-apiserver.js';
import { GATEWAY_API_CRDS as CRD_DIR } from '../kit/upstream-fixtures.js';
import { runCli } from './run-cli.js';

const CHANNELS = ['standard', 'experimental'] as const;
const fixture = (channel: string): string => join(CRD_DIR, `${channel}-gateways.yaml`);

const PLACES = [0, 1].flatMap((v) => (['spec', 'status'] as const).map((list) => ({ v, list })));

interface CrdShape {
  spec: {
    versions: {
      schema: {
        openAPIV3Schema: {
          properties: Record<
            string,
            { properties: { addresses: { items: { properties: Record<string, unknown> } } } }
          >;
        };
      };
    }[];
  };
}

/** The properties of one address-list item schema (spec or status) of one version. */
function itemProperties(crd: unknown, v: number, list: string): Record<string, unknown> {
  return (crd as CrdShape).spec.versions[v]!.schema.openAPIV3Schema.properties[list]!.properties.addresses
    .items.properties;
}

function routabilityAt(crd: unknown, v: number, list: string): Record<string, unknown> | undefined {
  return itemProperties(crd, v, list)['routability'] as Record<string, unknown> | undefined;
}

/** Values the CRD pattern and the engine must judge alike. */
const JUDGED_ALIKE: readonly [string, boolean][] = [
  ['External', true],
  ['Cluster', true],
  ['example.com/CorpWan', true],
  ['a.b.c/d', true],
  ['example.com/a/b', true],
  ['example.com/100%', true],
  ["example.com/it's~ok", true],
  ['x/' + 'y'.repeat(ROUTABILITY_MAX_LENGTH - 2), true], // exactly 253
  ['x/' + 'y'.repeat(ROUTABILITY_MAX_LENGTH - 1), false], // 254
  ['', false],
  ['HostnameFoo', false],
  ['ExternalFoo', false],
  ['FooCluster', false],
  ['ClusterExternal', false],
  ['External|Cluster', false],
  ['external', false],
  ['cluster', false],
  ['CLUSTER', false],
  [' Cluster', false],
  ['Cluster ', false],
  ['Cluster\n', false],
  ['Public', false],
  ['Private', false],
  ['example.com/', false],
  ['/CorpWan', false],
  ['Example.com/CorpWan', false],
  ['example.com/Corp Wan', false],
  ['-example.com/x', false],
  ['example..com/x', false],
];

describe('crd-patch --apply against the Gateway API v1.6.1 CRDs', () => {
  const outputs = new Map<string, string>();
  beforeAll(async () => {
    for (const channel of CHANNELS) {
      const r = await runCli(runCrdPatch, ['--apply', fixture(channel)]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      outputs.set(channel, r.stdout);
    }
  });

  it.each(CHANNELS)(
    '%s: routability in spec and status addresses of v1 and v1beta1, nothing else changed',
    async (channel) => {
      const original = YAML.parse(await readFile(fixture(channel), 'utf8')) as Record<string, unknown>;
      const patched = YAML.parse(outputs.get(channel)!) as Record<string, unknown>;
      for (const { v, list } of PLACES) {
        expect(routabilityAt(original, v, list)).toBeUndefined();
        expect(routabilityAt(patched, v, list)).toMatchObject({
          type: 'string',
          maxLength: 253,
          pattern: ROUTABILITY_PATTERN,
          description: expect.stringContaining('GEP-5093'),
        });
      }
      // Remove the four additions: what is left is the original, annotations included.
      const stripped = structuredClone(patched);
      for (const { v, list } of PLACES) delete itemProperties(stripped, v, list)['routability'];
      expect(stripped).toEqual(original);
      expect((patched['metadata'] as { annotations: unknown }).annotations).toEqual(
        (original['metadata'] as { annotations: unknown }).annotations,
      );
    },
  );

  it.each(CHANNELS)('%s: applying it again changes nothing', async (channel) => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-'));
    try {
      await writeFile(join(dir, 'patched.yaml'), outputs.get(channel)!);
      const again = await runCli(runCrdPatch, ['--apply', join(dir, 'patched.yaml')]);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(outputs.get(channel));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads JSON and stdin too, with the same result', async () => {
    const original = YAML.parse(await readFile(fixture('standard'), 'utf8')) as unknown;
    const r = await runCli(runCrdPatch, ['--apply', '-'], { stdin: JSON.stringify(original) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(outputs.get('standard'));
  });

  it('the patched schema and the engine accept and reject the same values', async () => {
    const ajv = new Ajv({ strict: false });
    const field = FieldPath.root('spec', 'addresses').index(0).child('routability');
    for (const channel of CHANNELS) {
      const patched = YAML.parse(outputs.get(channel)!) as unknown;
      for (const { v, list } of PLACES) {
        const validate = ajv.compile(routabilityAt(patched, v, list)!);
        for (const [value, expected] of JUDGED_ALIKE) {
          const bySchema = validate(value);
          const byEngine = checkRoutabilitySyntax(value, field) === undefined;
          expect({ value, bySchema, byEngine }).toEqual({ value, bySchema: expected, byEngine: expected });
        }
      }
    }
  });

  it('refuses a file that is not the Gateway CRD, naming what was expected (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-'));
    try {
      const original = YAML.parse(await readFile(fixture('standard'), 'utf8')) as {
        metadata: { name: string };
        spec: { versions: { name: string }[] };
      };
      const cases: [string, string, RegExp][] = [
        [
          'gateway.yaml',
          'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\n',
          /expected kind CustomResourceDefinition \(apiextensions.k8s.io\/v1\) named gateways.gateway.networking.k8s.io, found gateway.networking.k8s.io\/v1 Gateway gw/,
        ],
        [
          'httproutes.yaml',
          YAML.stringify({ ...original, metadata: { name: 'httproutes.gateway.networking.k8s.io' } }),
          /expected the CRD gateways.gateway.networking.k8s.io, found httproutes.gateway.networking.k8s.io/,
        ],
        [
          'swapped.yaml',
          YAML.stringify({
            ...original,
            spec: { ...original.spec, versions: [...original.spec.versions].reverse() },
          }),
          /expected spec.versions\[0\].name to be v1, found v1beta1; expected spec.versions\[1\].name to be v1beta1, found v1/,
        ],
        ['two.yaml', 'a: 1\n---\nb: 2\n', /expected exactly one document/],
        ['broken.yaml', 'kind: [unclosed\n', /not valid YAML or JSON/],
        [
          'laughs.yaml',
          ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]']
            .concat(
              Array.from(
                { length: 9 },
                (_, i) => `l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(', ')}]`,
              ),
            )
            .join('\n'),
          /laughs.yaml: not valid YAML or JSON: document contains excessive aliasing/,
        ],
      ];
      for (const [name, text, message] of cases) {
        await writeFile(join(dir, name), text);
        const r = await runCli(runCrdPatch, ['--apply', join(dir, name)]);
        expect({ name, code: r.code, stdout: r.stdout }).toEqual({ name, code: 2, stdout: '' });
        expect(r.stderr).toMatch(message);
      }
      const missing = await runCli(runCrdPatch, ['--apply', join(dir, 'missing.yaml')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('ENOENT');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('crd-patch output and flags', () => {
  it('prints the RFC 6902 patch: version guards, absence guards, then four adds with the one pattern', async () => {
    const r = await runCli(runCrdPatch, []);
    expect(r.code).toBe(0);
    const ops = JSON.parse(r.stdout) as { op: string; path: string; value: unknown }[];
    expect(ops).toEqual(routabilityPatch());
    expect(ops.slice(0, 2)).toEqual([
      { op: 'test', path: '/spec/versions/0/name', value: 'v1' },
      { op: 'test', path: '/spec/versions/1/name', value: 'v1beta1' },
    ]);
    const places = PLACES.map(
      ({ v, list }) =>
        `/spec/versions/${v}/schema/openAPIV3Schema/properties/${list}/properties/addresses/items/properties/routability`,
    );
    expect(ops.slice(2, 6)).toEqual(places.map((path) => ({ op: 'test', path, value: null })));
    expect(ops.slice(6).map((o) => o.path)).toEqual(places);
    for (const op of ops.slice(6)) {
      expect(op.op).toBe('add');
      expect(op.value).toMatchObject({ type: 'string', maxLength: 253, pattern: ROUTABILITY_PATTERN });
    }
    expect(ops.some((o) => o.path.includes('annotations'))).toBe(false);
  });

  it('--help prints usage; bad flags exit 2', async () => {
    const help = await runCli(runCrdPatch, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: routability-webhook crd-patch');
    expect(help.stdout).toContain('--patch-cluster');
    expect(help.stdout).toContain(
      'kubectl patch crd gateways.gateway.networking.k8s.io --type json --patch-file patch.json',
    );
    const bad = await runCli(runCrdPatch, ['--nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--nope');
    const both = await runCli(runCrdPatch, ['--apply', 'x', '--patch-cluster']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('cannot be combined');
  });
});

describe('crd-patch --patch-cluster', () => {
  let fake: FakeApiServer | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('patches the live CRD once, then reports it unchanged', async () => {
    fake = await FakeApiServer.start();
    const original = YAML.parse(await readFile(fixture('experimental'), 'utf8')) as Record<
      string,
      unknown
    > & {
      metadata: Record<string, unknown>;
    };
    fake.crds.set('gateways.gateway.networking.k8s.io', original);
    const first = await runCli(runCrdPatch, ['--patch-cluster', '--kubeconfig', fake.kubeconfigPath]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^crd\/gateways.gateway.networking.k8s.io patched: added routability to spec.addresses and status.addresses of v1, v1beta1/,
    );
    const patches = fake.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(patches[0]!.contentType).toBe('application/json-patch+json');
    const live = fake.crds.get('gateways.gateway.networking.k8s.io')!;
    for (const { v, list } of PLACES)
      expect(routabilityAt(live, v, list)).toMatchObject({ pattern: ROUTABILITY_PATTERN });
    expect(live.metadata['annotations']).toEqual(original.metadata['annotations']);

    // The live result equals --apply on the same file.
    const applied = await runCli(runCrdPatch, ['--apply', fixture('experimental')]);
    const { resourceVersion: _rv, ...liveMeta } = live.metadata;
    expect({ ...live, metadata: liveMeta }).toEqual(YAML.parse(applied.stdout));

    const second = await runCli(runCrdPatch, ['--patch-cluster'], {
      env: { KUBECONFIG: fake.kubeconfigPath },
    });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('already has routability');
    expect(fake.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });

  it('fails with exit 2 and a clear message when the CRD is missing or the cluster unreachable', async () => {
    fake = await FakeApiServer.start();
    const missing = await runCli(runCrdPatch, ['--patch-cluster', '--kubeconfig', fake.kubeconfigPath]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /cannot read crd\/gateways.gateway.networking.k8s.io from http:\/\/127.0.0.1:\d+: HTTP 404/,
    );
    // Keep a copy of the kubeconfig; the server behind it then goes away.
    const config = await readFile(fake.kubeconfigPath, 'utf8');
    await fake.close();
    fake = undefined;
    const dir = await mkdtemp(join(tmpdir(), 'crd-'));
    try {
      await writeFile(join(dir, 'kubeconfig'), config);
      const down = await runCli(runCrdPatch, ['--patch-cluster', '--kubeconfig', join(dir, 'kubeconfig')]);
      expect(down.code).toBe(2);
      expect(down.stderr).toMatch(/cannot read crd\/gateways.gateway.networking.k8s.io .*ECONNREFUSED/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // HOME is the test file's own empty folder (test/kit/isolated-env.ts), so no
    // ~/.kube/config of the machine can be found and patched.
    expect(homedir()).toContain('rw-test-home-');
    expect(existsSync(join(homedir(), '.kube', 'config'))).toBe(false);
    const none = await runCli(runCrdPatch, ['--patch-cluster'], { env: {} });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no Kubernetes credentials found');
  });
});

describe('the printed patch applied by hand (kubectl patch --type json)', () => {
  const patchOf = async (revision: string) =>
    JSON.parse((await runCli(runCrdPatch, ['--gep-revision', revision])).stdout) as Parameters<
      typeof applyJsonPatch
    >[1];
  const withRevision = async (revision: string) => {
    const crd = YAML.parse(await readFile(fixture('standard'), 'utf8')) as unknown;
    return applyJsonPatch(crd, await patchOf(revision));
  };

  it.each([
    { over: 'provisional', apply: 'experimental' },
    { over: 'experimental', apply: 'provisional' },
    { over: 'provisional', apply: 'provisional' },
  ])('refuses a CRD that already has the $over schema when applying $apply', async ({ over, apply }) => {
    const crd = await withRevision(over);
    expect(() => applyJsonPatch(crd, routabilityPatch(apply as 'provisional'))).toThrow(
      /^test \/spec\/versions\/0\/schema\/openAPIV3Schema\/properties\/spec\/properties\/addresses\/items\/properties\/routability: expected null, found \{/,
    );
  });

  it('the API server (the fake, with its own JSON patch) refuses it too and leaves the CRD unchanged', async () => {
    const fake = await FakeApiServer.start();
    try {
      const experimental = await withRevision('experimental');
      fake.crds.set('gateways.gateway.networking.k8s.io', experimental as never);
      const res = await fetch(
        `${fake.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io`,
        {
          method: 'PATCH',
          headers: { 'content-type': 'application/json-patch+json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(await patchOf('provisional')),
        },
      );
      expect(res.status).toBe(422);
      expect(await res.text()).toContain('test failed at /spec/versions/0/');
      const after = fake.crds.get('gateways.gateway.networking.k8s.io');
      expect(routabilityAt(after, 0, 'spec')).toEqual(routabilityAt(experimental, 0, 'spec'));
    } finally {
      await fake.close();
    }
  });
});
