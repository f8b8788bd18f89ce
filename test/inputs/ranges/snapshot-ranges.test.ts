/**
 * readClusterSnapshot (check --from-cluster) when the cluster's ServiceCIDRs
 * give no usable range, and the snapshot's allocated-IP lookups after one of
 * them failed (still asked, and not logged into the command's output).
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readClusterSnapshot } from '../../../src/inputs/snapshot.js';
import { FakeApiServer, ipAddress, serviceCidr } from '../../kit/fake-apiserver.js';

const HINT = 'set --service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR) to the service range of the cluster';

let fake: FakeApiServer;
beforeEach(async () => {
  fake = await FakeApiServer.start();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await fake.close();
});

describe('a snapshot of a cluster without a usable service range', () => {
  it.each([
    { objects: 'no ServiceCIDR object', cidrs: [], skipped: '' },
    {
      objects: 'ServiceCIDRs whose ranges do not parse',
      cidrs: [
        ['a', 'not-a-cidr'],
        ['b', '10.0.0.1/33'],
      ],
      // Each object's reason, in order, so the operator sees what to fix.
      skipped:
        ' ("not-a-cidr" is not a CIDR (expected address/prefix, e.g. 10.96.0.0/12); "10.0.0.1/33" has a prefix longer than 32 bits)',
    },
  ])('$objects: fails, saying why and naming --service-cidr', async ({ cidrs, skipped }) => {
    for (const [name, cidr] of cidrs) fake.put('servicecidrs', serviceCidr(name!, [cidr!]));
    await expect(readClusterSnapshot({ kubeconfig: fake.kubeconfigPath })).rejects.toThrow(
      new Error(`the cluster at ${fake.url} has no usable ServiceCIDR objects${skipped}: ${HINT}`),
    );
    // The ranges decide before anything else is read.
    expect(fake.requests.map((r) => r.path)).toEqual(['/apis/networking.k8s.io/v1/servicecidrs']);
  });
});

describe("a snapshot's allocated-IP lookups", () => {
  it('after a failed lookup, the next ones are still asked: one check has no probe to wait for', async () => {
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
    );
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath });
    const lookups = snap.allocatedIPs!;
    try {
      fake.failGets('ipaddresses', 1, 500);
      const failed = await lookups.lookup(['10.96.0.10']);
      expect(failed.uncheckedReason?.('10.96.0.10')).toMatch(/HTTP 500/);
      const again = await lookups.lookup(['10.96.0.10']);
      expect(again.uncheckedReason?.('10.96.0.10')).toBeUndefined();
      expect(again.holderOf('10.96.0.10')).toMatchObject({ namespace: 'kube-system', name: 'kube-dns' });
      expect(fake.getCount('ipaddresses')).toBe(3); // the probe, the failed lookup, the one asked again
    } finally {
      await lookups.close();
    }
  });

  it("log nothing into the command's output, even when a lookup fails", async () => {
    // check --from-cluster prints its report on stdout: a log line of the lookups there would corrupt
    // it. pino writes to a file descriptor with fs.write/fs.writeSync (sonic-boom), not through
    // process.stdout, so those are what is watched.
    const written: string[] = [];
    const record = (data: unknown): void => {
      written.push(typeof data === 'string' ? data : Buffer.from(data as Uint8Array).toString('utf8'));
    };
    const write = fs.write.bind(fs);
    const writeSync = fs.writeSync.bind(fs);
    vi.spyOn(fs, 'write').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
      record(data);
      return (write as (...a: unknown[]) => unknown)(fd, data, ...rest);
    }) as typeof fs.write);
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
      record(data);
      return (writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
    }) as typeof fs.writeSync);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath });
    fake.failGets('ipaddresses', 1, 500);
    const failed = await snap.allocatedIPs!.lookup(['10.96.0.20']);
    await snap.allocatedIPs!.close();
    expect(failed.uncheckedReason?.('10.96.0.20')).toMatch(/HTTP 500/);
    expect(written.filter((w) => w.includes('allocated-IP'))).toEqual([]);
  });
});
