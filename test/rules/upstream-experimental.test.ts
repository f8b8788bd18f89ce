/**
 * Upstream's own GEP-5093 tests as ours (experimental revision): the CRD
 * validation table, on spec and on status, and the conformance manifests
 * with the suite's placeholders filled in, run through the engine, through
 * check's library function and through the `check` command itself (the files:
 * test/fixtures/upstream/gep-5093-upstream).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSource } from '../../src/check/run.js';
import { SourceText } from '../../src/check/source.js';
import { validateGateway, type RuleContext } from '../../src/rules/index.js';
import { check } from '../check/support.js';
import { baseGateway, context, create, ranges, statusUpdate } from '../kit/gateways.js';
import { GEP_5093_UPSTREAM } from '../kit/upstream-fixtures.js';

const TABLE = join(GEP_5093_UPSTREAM, 'crd-validation-cases.json');
const CONFORMANCE = join(GEP_5093_UPSTREAM, 'conformance');

const EXPERIMENTAL = context({ revision: 'experimental', ranges: ranges('10.96.0.0/12') });
const USABLE = '10.96.0.50';
const UNUSABLE = '192.0.2.50';

describe('upstream CRD validation table (experimental revision)', () => {
  const table = JSON.parse(readFileSync(TABLE, 'utf8')) as {
    cases: { routability: string; crdAccepts: boolean }[];
  };

  it('has cases both ways', () => {
    expect(table.cases.some((c) => c.crdAccepts)).toBe(true);
    expect(table.cases.some((c) => !c.crdAccepts)).toBe(true);
  });

  it.each(table.cases)('spec routability $routability: admitted exactly when the CRD accepts it', (c) => {
    const gw = baseGateway({ spec: [{ type: 'IPAddress', value: '1.2.3.4', routability: c.routability }] });
    const result = validateGateway(create(gw), { ...EXPERIMENTAL, specPolicy: 'warn' });
    expect(result.allowed).toBe(c.crdAccepts);
    if (!c.crdAccepts) expect(result.violations.map((f) => f.code)).toEqual(['RoutabilityUnsupported']);
  });

  it.each(table.cases)('status routability $routability: admitted exactly when the CRD accepts it', (c) => {
    const gw = baseGateway({ status: [{ type: 'IPAddress', value: '1.2.3.4', routability: c.routability }] });
    const result = validateGateway(statusUpdate(gw, baseGateway()), {
      ...EXPERIMENTAL,
      statusPolicy: 'warn',
    });
    expect(result.allowed).toBe(c.crdAccepts);
  });
});

/** The conformance manifests with the suite's placeholders filled in. */
function manifests(): { file: string; text: string }[] {
  return readdirSync(CONFORMANCE)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => ({
      file,
      text: readFileSync(join(CONFORMANCE, file), 'utf8')
        .replaceAll('PLACEHOLDER_USABLE_ADDRS', USABLE)
        .replaceAll('PLACEHOLDER_UNUSABLE_ADDRS', UNUSABLE)
        .replaceAll('{GATEWAY_CLASS_NAME}', 'conformance'),
    }));
}

/**
 * The oldest manifest (commit 3d46d4d2a715) still uses the earlier sentinel
 * name `testing.gateway.networking.k8s.io/sentinel`, whose prefix ends in
 * `.k8s.io`: upstream's own CRD rule refuses it, and so does the engine. The
 * newest GEP text reserves `testing.x-k8s.io/sentinel`; the run below uses
 * that name, as the suite does at the newest commit.
 */
const OLD_SENTINEL = 'testing.gateway.networking.k8s.io/sentinel';
const NEW_SENTINEL = 'testing.x-k8s.io/sentinel';

function checkAll(ctx: RuleContext, rename = true) {
  return manifests().flatMap(({ file, text }) =>
    checkSource(
      new SourceText(file, rename ? text.replaceAll(OLD_SENTINEL, NEW_SENTINEL) : text),
      ctx,
    ).gateways.flatMap((g) =>
      g.findings.map((f) => ({ gateway: g.name, severity: f.severity, code: f.code, field: f.field })),
    ),
  );
}

/** The out-of-range Cluster requests: both static-unusable manifests' first entry. */
const OUT_OF_RANGE = [
  {
    gateway: 'gateway-address-routability-cluster-static-partial',
    code: 'ClusterAddressOutsideServiceRange',
    field: 'spec.addresses[0].value',
  },
  {
    gateway: 'gateway-address-routability-cluster-static-unassigned',
    code: 'ClusterAddressOutsideServiceRange',
    field: 'spec.addresses[0].value',
  },
];

describe('upstream conformance manifests through check (experimental revision)', () => {
  it('--spec-policy warn: admitted, with warnings only on the out-of-range Cluster requests', () => {
    const findings = checkAll({ ...EXPERIMENTAL, specPolicy: 'warn' });
    expect(findings).toEqual(OUT_OF_RANGE.map((f) => ({ ...f, severity: 'warning' })));
  });

  it('enforce (the default): exactly those entries are violations', () => {
    const findings = checkAll({ ...EXPERIMENTAL, specPolicy: 'enforce' });
    expect(findings).toEqual(OUT_OF_RANGE.map((f) => ({ ...f, severity: 'violation' })));
  });

  it('the earlier sentinel name is refused, as upstream CRD validation refuses it', () => {
    const findings = checkAll({ ...EXPERIMENTAL, specPolicy: 'warn' }, false).filter(
      (f) => f.gateway === 'gateway-address-routability',
    );
    expect(findings).toEqual([
      {
        gateway: 'gateway-address-routability',
        severity: 'violation',
        code: 'RoutabilityUnsupported',
        field: 'spec.addresses[0].routability',
      },
    ]);
  });
});

/**
 * The same manifests through the command a CI pipeline runs, as one stream on
 * stdin: the exit code and the lines name exactly the out-of-range entries.
 */
describe('upstream conformance manifests through `check --gep-revision experimental`', () => {
  const stdin = () =>
    manifests()
      .map(({ text }) => text.replaceAll(OLD_SENTINEL, NEW_SENTINEL))
      .join('\n---\n');
  const args = ['-f', '-', '--gep-revision', 'experimental', '--service-cidr', '10.96.0.0/12'];
  // One line per finding: `<stdin>:LINE:COL: [warning: ]Gateway ns/name: field: …`.
  const located = (out: string) => out.split('\n').filter((l) => l.includes(': Gateway '));

  it('--spec-policy warn: exit 0, warnings only on the out-of-range Cluster requests', async () => {
    const r = await check([...args, '--spec-policy', 'warn'], { stdin: stdin() });
    expect(r.code).toBe(0);
    const lines = located(r.stdout);
    expect(lines).toHaveLength(OUT_OF_RANGE.length);
    OUT_OF_RANGE.forEach((f, i) => {
      expect(lines[i]).toContain(f.gateway);
      expect(lines[i]).toContain(f.field);
      expect(lines[i]).toContain(': warning: Gateway ');
      expect(lines[i]).toContain('requires an address inside the service range (10.96.0.0/12)');
    });
    expect(r.stdout).toMatch(/: 0 violations, 2 warnings/);
  });

  it('enforce (the default): exit 1, exactly those entries as violations', async () => {
    const r = await check(args, { stdin: stdin() });
    expect(r.code).toBe(1);
    const lines = located(r.stdout);
    expect(lines).toHaveLength(OUT_OF_RANGE.length);
    OUT_OF_RANGE.forEach((f, i) => {
      expect(lines[i]).toContain(f.gateway);
      expect(lines[i]).toContain(f.field);
      expect(lines[i]).not.toContain('warning');
    });
    expect(r.stdout).toMatch(/: 2 violations, 0 warnings/);
  });
});
