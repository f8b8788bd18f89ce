/**
 * The floor for any Node webhook: node:https, read the body, JSON.parse it,
 * answer a fixed, correct AdmissionReview (the request's uid, allowed) with
 * JSON.stringify. Same TLS files, keep-alive and HTTP/1.1 as the webhook.
 *
 *   node baseline-server.js --cert tls.crt --key tls.key --port 0
 *
 * Prints one JSON line `{"msg":"listening","port":N}`; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { rawNodeHandler } from './lib/raw-node-handler.js';

const { values } = parseArgs({
  options: { cert: { type: 'string' }, key: { type: 'string' }, port: { type: 'string', default: '0' } },
});
if (!values.cert || !values.key) {
  process.stderr.write('usage: baseline-server --cert FILE --key FILE [--port N]\n');
  process.exit(2);
}

const server = createServer(
  {
    cert: readFileSync(values.cert),
    key: readFileSync(values.key),
    minVersion: 'TLSv1.2',
    keepAliveTimeout: 120_000,
  },
  rawNodeHandler,
);

server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
