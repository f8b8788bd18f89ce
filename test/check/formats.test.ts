/** Hostile names in the github and junit formats of check, stdin in annotations, and the --from-cluster wiring. */
import { describe, expect, it } from 'vitest';
import { resolveContext, type ReadClusterSnapshot } from '../../src/check/context.js';
import { parseCheckOptions } from '../../src/check/options.js';
import { checkSource } from '../../src/check/run.js';
import { SourceText } from '../../src/check/source.js';
import { ServiceRanges } from '../../src/rules/index.js';
import { check, RANGES } from './support.js';

const HOSTILE = [
  'apiVersion: gateway.networking.k8s.io/v1',
  'kind: Gateway',
  'metadata:',
  '  name: "a<b>&\'c\\"d"',
  '  namespace: "50%,x:y"',
  '  labels: {}',
  'spec:',
  '  addresses:',
  '    - value: 10.96.0.9',
  '      routability: "Ext\\r\\nernal\\u0001"',
].join('\n');

describe('github workflow commands', () => {
  it('a name with a line break is quoted, never printed raw', async () => {
    const r = await check(['-f', '-', ...RANGES], {
      stdin: HOSTILE.replace('  name: "a<b>', '  name: "line\\nbreak a<b>'),
    });
    expect(r.stdout.split('\n')[0]).toMatch(
      /^<stdin>:10:20: Gateway 50%,x:y\/"line\\nbreak a<b>&'c\\"d": spec/,
    );
  });

  it('one annotation line per finding, whatever the input contains', async () => {
    const r = await check(['-f', '-', ...RANGES, '-o', 'github'], { stdin: HOSTILE });
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    // Standard input has no file to annotate: no file= property.
    expect(lines[0]).toMatch(
      /^::error line=10,col=20,title=RoutabilityUnsupported::Gateway 50%25,x:y\/a<b>&'c"d: /,
    );
    expect(lines[0]).not.toMatch(/[\r\n]/);
    expect(lines[1]).toBe('checked 1 Gateway in 1 file: 1 violation, 0 warnings');
  });

  it('warnings are ::warning', async () => {
    const r = await check(['-f', 'manifests/status.yaml', ...RANGES, '-o', 'github']);
    expect(
      r.stdout.split('\n').filter((l) => l.startsWith('::warning file=manifests/status.yaml,')),
    ).toHaveLength(5);
    expect(r.stdout).not.toMatch(/^::error/m);
  });
});

describe('junit XML', () => {
  it('a hostile Gateway yields well-formed markup', async () => {
    const r = await check(['-f', '-', ...RANGES, '-o', 'junit'], { stdin: HOSTILE });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('name="Gateway 50%,x:y/a&lt;b&gt;&amp;&apos;c&quot;d"');
    // No raw markup characters inside attribute values or text.
    for (const attr of r.stdout.matchAll(/="([^"]*)"/g))
      expect(attr[1]).not.toMatch(/[<>&](?!(amp|lt|gt|quot|apos|#\d+);)/);
    expect(r.stdout).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="routability-webhook check" tests="1" failures="1" errors="0">\n/,
    );
    expect(r.stdout.trimEnd().endsWith('</testsuites>')).toBe(true);
  });
});

describe('--from-cluster wiring (with a fake snapshot reader)', () => {
  const options = (argv: string[]) => {
    const parsed = parseCheckOptions(['-f', 'x', ...argv], {});
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };
  const ranges = ServiceRanges.parse(['10.96.0.0/12']);
  if (!ranges.ok) throw new Error(ranges.error);
  const lookedUp: string[][] = [];
  const reader: ReadClusterSnapshot = async () => ({
    ranges: ranges.ranges,
    allocatedIPs: {
      lookup: async (ips) => {
        lookedUp.push([...ips]);
        return {
          holderOf: (ip) =>
            ip === '10.96.0.10'
              ? { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' }
              : undefined,
        };
      },
      describe: () => ({}),
      close: async () => {},
    },
  });

  it('uses the cluster ranges and allocated IPs, reading with the kubeconfig flag and the environment given', async () => {
    const seen: unknown[] = [];
    const recording: ReadClusterSnapshot = async (o) => {
      seen.push(o);
      return reader(o);
    };
    const env = { KUBECONFIG: '/elsewhere' };
    const resolved = await resolveContext(
      options(['--from-cluster', '--kubeconfig', 'k.yaml']),
      env,
      async () => recording,
    );
    expect(seen).toEqual([{ kubeconfig: 'k.yaml', env, readGepRevision: true }]);
    if (!resolved.ok) throw new Error(resolved.error);
    expect(resolved.settings).toMatchObject({
      rangesFrom: 'cluster',
      serviceCidrs: ['10.96.0.0/12'],
      allocatedIPs: true,
    });
    const text =
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: a}\nspec:\n  addresses:\n  - {value: 10.96.0.10, routability: Cluster}\n';
    lookedUp.length = 0;
    const report = await resolved.allocations!.prefetch.decide(resolved.ctx, (c) =>
      checkSource(new SourceText('g.yaml', text), c),
    );
    expect(report.gateways[0]!.findings.map((f) => f.code)).toEqual(['ClusterAddressAllocated']);
    // Only the address the rules asked about was looked up.
    expect(lookedUp).toEqual([['10.96.0.10']]);
  });

  it('--service-cidr replaces the cluster ranges but the allocations still count', async () => {
    const resolved = await resolveContext(
      options(['--from-cluster', '--service-cidr', '10.0.0.0/16']),
      {},
      async () => reader,
    );
    if (!resolved.ok) throw new Error(resolved.error);
    expect(resolved.settings).toMatchObject({
      rangesFrom: 'flag',
      serviceCidrs: ['10.0.0.0/16'],
      allocatedIPs: true,
    });
  });

  it('a failing reader is an error naming the flag', async () => {
    const resolved = await resolveContext(options(['--from-cluster']), {}, async () => async () => {
      throw new Error('cannot reach the Kubernetes API');
    });
    expect(resolved).toEqual({
      ok: false,
      error: '--from-cluster: cannot reach the Kubernetes API',
      usage: false,
    });
  });

  it('without --from-cluster the cluster module is never loaded', async () => {
    let loaded = false;
    const resolved = await resolveContext(options(RANGES), {}, async () => {
      loaded = true;
      return reader;
    });
    expect(resolved.ok).toBe(true);
    expect(loaded).toBe(false);
  });
});
