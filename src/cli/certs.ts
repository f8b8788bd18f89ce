/** `routability-webhook certs`: a CA and a serving certificate, written into a folder. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateCertificates } from '../certs/generate.js';
import { writeCertificateFiles } from '../certs/write.js';
import { CERTS_FLAGS, helpText, parseFlags } from '../config.js';
import { EXIT_OK, EXIT_USAGE, writeLine, type CommandIO } from './io.js';

export async function runCerts(argv: readonly string[], io: CommandIO): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    writeLine(
      io.stdout,
      helpText(
        'certs',
        'Write a CA (ca.crt, ca.key) and a serving certificate (tls.crt, tls.key).',
        CERTS_FLAGS,
      ),
    );
    return EXIT_OK;
  }
  const parsed = parseFlags(CERTS_FLAGS, argv, io.env);
  if (!parsed.ok) {
    writeLine(io.stderr, `routability-webhook certs: ${parsed.error}`);
    return EXIT_USAGE;
  }
  const f = parsed.value.flags;
  const outDir = resolve(io.cwd, f['out-dir'] as string);
  const names = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'];
  const existing = names.filter((n) => existsSync(join(outDir, n)));
  if (existing.length > 0 && f['force'] !== true) {
    writeLine(
      io.stderr,
      `routability-webhook certs: ${outDir} already has ${existing.join(', ')}; use --force to overwrite`,
    );
    return EXIT_USAGE;
  }
  const generated = await generateCertificates({
    service: f['service'] as string,
    namespace: f['namespace'] as string,
    clusterDomain: f['cluster-domain'] as string,
    extraNames: (f['extra-san'] as string[] | undefined) ?? [],
    days: f['days'] as number,
  });
  const written = await writeCertificateFiles(outDir, generated, { caKey: true });
  writeLine(io.stdout, `wrote ${written.join(', ')}`);
  writeLine(io.stdout, `SANs: ${[...generated.dnsNames, ...generated.ipAddresses].join(', ')}`);
  return EXIT_OK;
}
