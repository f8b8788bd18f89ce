/**
 * The hostile-client attacks at the full sizes, each against a fresh
 * server with the heap the chart gives a replica (POD_NODE_ARGS), beside an ordinary client. Not run in CI:
 * `npm run bench -- attack` (a few minutes). 127.0.0.1 only.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  deepAddressValue,
  deepBodies,
  flatBodies,
  formatReport,
  hugeStatusMutate,
  POD_NODE_ARGS,
  idleTlsConnections,
  silentTcpConnections,
  type AttackReport,
  type AttackTarget,
} from '../test/kit/attacks.js';
import { makeCerts, spawnWebhook } from '../test/kit/server-process.js';
import { tempDir } from '../test/kit/key-files.js';

const attacks: [string, (t: AttackTarget) => Promise<AttackReport>][] = [
  ['deep-1', (t) => deepBodies(t, 3_500_000, 1, 3)],
  ['deep-4', (t) => deepBodies(t, 1_000_000, 4, 3)],
  ['deep-value', (t) => deepAddressValue(t)],
  ['idle-tls', (t) => idleTlsConnections(t, 5_000, 20_000)],
  ['silent-tcp-6k', (t) => silentTcpConnections(t, 6_000)],
  ['silent-tcp-12k', (t) => silentTcpConnections(t, 12_000)],
  ['mutate-100k', (t) => hugeStatusMutate(t, 100_000)],
  ['flat-16', (t) => flatBodies(t, 16, 6_000_000)],
];

const only = process.argv.slice(2);
const tmp = await tempDir('attack-');
try {
  const certs = await makeCerts(join(tmp.path, 'certs'));
  const ca = await readFile(certs.ca, 'utf8');
  for (const [name, attack] of attacks) {
    if (only.length > 0 && !only.includes(name)) continue;
    const server = await spawnWebhook({
      certs,
      logFile: join(tmp.path, `${name}.log`),
      nodeArgs: POD_NODE_ARGS,
    });
    try {
      const report = await attack({ port: server.port, pid: server.pid, ca });
      const alive = server.process.exitCode === null;
      console.log(`${formatReport(report)}; server ${alive ? 'running' : 'EXITED'}`);
    } finally {
      await server.stop();
    }
  }
} finally {
  await tmp.remove();
}
