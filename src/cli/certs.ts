/** `routability-webhook certs`: a CA and a serving certificate, written into a folder. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateCertificates, type GeneratedCertificates } from '../certs/generate.js';
import { readCa } from '../certs/read.js';
import { writeCertificateFiles } from '../certs/write.js';
import { type FlagDefinitions, type FlagValues } from '../config/flags.js';
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
  days: { kind: 'integer', default: 365, description: 'Validity of the serving certificate in days.' },
  'ca-days': {
    kind: 'integer',
    default: 3650,
    description: 'Validity of a new CA in days (renewals sign with it until then).',
  },
  renew: {
    kind: 'boolean',
    default: false,
    description:
      'Renew: a new serving certificate signed by the ca.crt and ca.key already in --out-dir (caBundle unchanged).',
  },
  force: { kind: 'boolean', default: false, description: 'Overwrite existing files.' },
} as const satisfies FlagDefinitions;

const CERT_FILES = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'];

export const command = defineCommand({
  name: 'certs',
  summary: 'write a CA and a serving certificate for the webhook',
  flags: CERTS_FLAGS,
  help: {
    description: [
      'Write a CA (ca.crt, ca.key) and a serving certificate (tls.crt, tls.key) whose SANs are SERVICE,',
      'SERVICE.NAMESPACE, SERVICE.NAMESPACE.svc, SERVICE.NAMESPACE.svc.DOMAIN, and always localhost and',
      '127.0.0.1 (for local use), plus --extra-san.',
    ],
  },
  options: (flags: FlagValues<typeof CERTS_FLAGS>) => ({ ok: true, value: flags }),
  run: async (f, { io, fail }) => {
    if (f.days < 1 || f['ca-days'] < 1) return fail('--days and --ca-days must be at least 1');
    const outDir = resolve(io.cwd, f['out-dir']);
    let ca: { cert: string; key: string } | undefined;
    if (f.renew) {
      const found = await readCa(outDir);
      if (typeof found === 'string') return fail(found);
      ca = found;
    } else {
      const existing = CERT_FILES.filter((n) => existsSync(join(outDir, n)));
      if (existing.length > 0 && !f.force)
        return fail(
          `${outDir} already has ${existing.join(', ')}; use --force to overwrite, or --renew to renew the serving certificate with that CA`,
        );
    }
    const generated = await generateCertificates({
      service: f.service,
      namespace: f.namespace,
      clusterDomain: f['cluster-domain'],
      extraNames: f['extra-san'] ?? [],
      days: f.days,
      caDays: f['ca-days'],
      ...(ca ? { ca } : {}),
    });
    const written = await writeCertificateFiles(outDir, generated, { caKey: true });
    writeLine(io.stdout, `wrote ${written.join(', ')}`);
    writeLine(io.stdout, `SANs: ${[...generated.dnsNames, ...generated.ipAddresses].join(', ')}`);
    for (const line of validityLines(generated, f)) writeLine(io.stdout, line);
    return EXIT_OK;
  },
});

const DAY_MS = 86_400_000;

/** When the certificates expire, and the command that renews the serving one without an outage. */
function validityLines(g: GeneratedCertificates, f: FlagValues<typeof CERTS_FLAGS>): string[] {
  const days = (d: Date) => Math.floor((d.getTime() - Date.now()) / DAY_MS);
  const renew = `routability-webhook certs --renew --out-dir ${f['out-dir']} --service ${f.service} --namespace ${f.namespace}${f['cluster-domain'] === 'cluster.local' ? '' : ` --cluster-domain ${f['cluster-domain']}`}${(f['extra-san'] ?? []).map((n) => ` --extra-san ${n}`).join('')}`;
  return [
    `serving certificate valid until ${g.notAfter.toISOString()} (${days(g.notAfter)} days)`,
    `CA (${g.newCa ? 'new' : 'reused'}) valid until ${g.caNotAfter.toISOString()} (${days(g.caNotAfter)} days)`,
    `renew before then: ${renew}`,
    '  (same CA: caBundle unchanged; serve reloads tls.crt and tls.key without a restart;',
    '  routability_webhook_certificate_expiry_timestamp_seconds shows the notAfter in use)',
  ];
}
