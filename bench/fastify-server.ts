/**
 * The bare-Fastify baseline: what the webhook costs without the webhook. The
 * same Fastify transport options as the server (TLS policy, timeouts,
 * keep-alive, body limit, client-error answers: `transportOptions` of
 * src/http/app.ts), the same JSON body reader within the same default body
 * budget, and a fixed, correct AdmissionReview (the request's uid, allowed)
 * as the answer. No logger, no hooks, no metrics, no rules.
 *
 *   node fastify-server.js --cert tls.crt --key tls.key --port 0
 *
 * Prints one JSON line `{"msg":"listening","port":N}`; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { bareFastifyApp } from './lib/bare-fastify.js';

const { values } = parseArgs({
  options: { cert: { type: 'string' }, key: { type: 'string' }, port: { type: 'string', default: '0' } },
});
if (!values.cert || !values.key) {
  process.stderr.write('usage: fastify-server --cert FILE --key FILE [--port N]\n');
  process.exit(2);
}

const app = bareFastifyApp({ cert: readFileSync(values.cert), key: readFileSync(values.key) });

app.listen({ port: Number(values.port), host: '127.0.0.1' }).then(
  () => {
    process.stdout.write(
      `${JSON.stringify({ msg: 'listening', port: (app.server.address() as AddressInfo).port })}\n`,
    );
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
