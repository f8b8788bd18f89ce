/**
 * The Fastify baselines (bench/lib/bare-fastify.ts), answering a fixed,
 * correct AdmissionReview (the request's uid, allowed), no logger, hooks,
 * metrics or rules:
 * - by default, bare Fastify with the webhook's own transport options (TLS
 *   policy, timeouts, keep-alive, body limit, client-error answers:
 *   `transportOptions` of src/http/app.ts) and its JSON body reader within the
 *   default body budget: what the webhook costs without the webhook;
 * - with `--defaults`, Fastify with its defaults (https, keepAliveTimeout,
 *   bodyLimit, Fastify's own JSON parser): the framework's floor.
 *
 * - with `--transport` and/or `--body-reader`, the defaults plus only that part.
 *
 *   node fastify-server.js --cert tls.crt --key tls.key --port 0 [--defaults | --transport | --body-reader]
 *
 * Prints one JSON line `{"msg":"listening","port":N}`; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { bareFastifyApp, defaultsFastifyApp, fastifyApp } from './lib/bare-fastify.js';

const { values } = parseArgs({
  options: {
    cert: { type: 'string' },
    key: { type: 'string' },
    port: { type: 'string', default: '0' },
    defaults: { type: 'boolean', default: false },
    transport: { type: 'boolean', default: false },
    'body-reader': { type: 'boolean', default: false },
  },
});
if (!values.cert || !values.key) {
  process.stderr.write('usage: fastify-server --cert FILE --key FILE [--port N] [--defaults]\n');
  process.exit(2);
}

const tls = { cert: readFileSync(values.cert), key: readFileSync(values.key) };
const app =
  values.transport || values['body-reader']
    ? fastifyApp(tls, { transport: values.transport, bodyReader: values['body-reader'] })
    : values.defaults
      ? defaultsFastifyApp(tls)
      : bareFastifyApp(tls);

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
