/** `routability-webhook certs`: a CA and a serving certificate, written into a folder. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateCertificates } from '../certs/generate.js';
import { writeCertificateFiles } from '../certs/write.js';
import { helpText, type FlagDefinitions, type FlagValues } from '../config/flags.js';
import { EXIT_OK, writeLine } from '../io.js';
import { defineCommand } from './command.js';

const CERTS_FLAGS = {
  'out-dir': {
    kind: 'string',
    default: 'certs',
    description: 'Folder to write ca.crt, ca.key, tls.crt and tls.key into.',
  },
  service: {
    kind: 'string',
    default: 'gateway-routability-webhook',
    description: 'Service name the apiserver calls.',
  },
  namespace: { kind: 'string', default: 'default', description: 'Namespace of that Service.' },
  'cluster-domain': {
    kind: 'string',
    default: 'cluster.local',
    description: 'Cluster DNS domain for the long SAN.',
  },
  'extra-san': { kind: 'list', description: 'More DNS names or IPs to include.' },
  days: { kind: 'integer', default: 365, description: 'Validity in days.' },
  force: { kind: 'boolean', default: false, description: 'Overwrite existing files.' },
} as const satisfies FlagDefinitions;

const CERT_FILES = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'];

export const command = defineCommand({
  name: 'certs',
  summary: 'write a CA and a serving certificate for the webhook',
  flags: CERTS_FLAGS,
  help: () =>
    helpText(
      'certs',
      'Write a CA (ca.crt, ca.key) and a serving certificate (tls.crt, tls.key) whose SANs are SERVICE,\nSERVICE.NAMESPACE, SERVICE.NAMESPACE.svc, SERVICE.NAMESPACE.svc.DOMAIN, and always localhost and\n127.0.0.1 (for local use), plus --extra-san.',
      CERTS_FLAGS,
    ),
  options: (flags: FlagValues<typeof CERTS_FLAGS>) => ({ ok: true, value: flags }),
  run: async (f, { io, fail }) => {
    const outDir = resolve(io.cwd, f['out-dir']);
    const existing = CERT_FILES.filter((n) => existsSync(join(outDir, n)));
    if (existing.length > 0 && !f.force)
      return fail(`${outDir} already has ${existing.join(', ')}; use --force to overwrite`);
    const generated = await generateCertificates({
      service: f.service,
      namespace: f.namespace,
      clusterDomain: f['cluster-domain'],
      extraNames: f['extra-san'] ?? [],
      days: f.days,
    });
    const written = await writeCertificateFiles(outDir, generated, { caKey: true });
    writeLine(io.stdout, `wrote ${written.join(', ')}`);
    writeLine(io.stdout, `SANs: ${[...generated.dnsNames, ...generated.ipAddresses].join(', ')}`);
    return EXIT_OK;
  },
});
