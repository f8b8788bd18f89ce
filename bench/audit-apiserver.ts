/**
 * The fake Kubernetes API for `npm run bench -- audit`, in its own process so
 * that serving pages of Gateways never costs the load generator's event loop
 * anything (the latencies measured are the webhook's alone).
 *
 * `node audit-apiserver.js N` seeds N realistic Gateways (managedFields
 * included; 50 namespaces; one in ten a Cluster address outside the service
 * range) and one ServiceCIDR, then prints one JSON line
 * `{"kubeconfig": "...", "url": "..."}` and serves until stdin closes.
 */
import { FakeApiServer, gateway, serviceCidr } from '../test/kit/fake-apiserver.js';

export const SERVICE_RANGE = '10.96.0.0/16';

function seed(fake: FakeApiServer, n: number): void {
  const objects = [];
  for (let i = 0; i < n; i++) {
    const value =
      i % 10 === 0 ? `10.200.${(i >> 8) & 255}.${i & 255}` : `10.96.${(i >> 8) & 255}.${i & 255 || 1}`;
    const g = gateway(`ns-${i % 50}`, `gw-${i}`, {
      spec: [{ type: 'IPAddress', value, routability: 'Cluster' }],
    });
    objects.push(g as Parameters<FakeApiServer['setSilently']>[1][number]);
  }
  fake.setSilently('gateways', objects);
}

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`usage: audit-apiserver.js N (got ${process.argv[2]})`);
  const fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', [SERVICE_RANGE]));
  seed(fake, n);
  process.stdout.write(`${JSON.stringify({ kubeconfig: fake.kubeconfigPath, url: fake.url })}\n`);
  process.stdin.resume();
  await new Promise<void>((done) => process.stdin.once('end', done));
  await fake.close();
}

await main();
