/** A private CA and a serving certificate with the SANs the apiserver checks. */
import selfsigned from 'selfsigned';

export interface CertificateRequest {
  /** Service name: SANs `<service>`, `<service>.<namespace>`, `<service>.<namespace>.svc`, and the cluster-domain form. */
  readonly service: string;
  readonly namespace: string;
  readonly clusterDomain?: string;
  /** Extra DNS and IP SANs; localhost and 127.0.0.1 are always included for local use. */
  readonly extraNames?: readonly string[];
  readonly days?: number;
}

export interface GeneratedCertificates {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

const IP_LIKE = /^[0-9.]+$|:/;

function sanNames(req: CertificateRequest): { dns: string[]; ips: string[] } {
  const domain = req.clusterDomain ?? 'cluster.local';
  const names = [
    req.service,
    `${req.service}.${req.namespace}`,
    // The apiserver verifies this name (a CN alone fails since Go 1.15).
    `${req.service}.${req.namespace}.svc`,
    `${req.service}.${req.namespace}.svc.${domain}`,
    'localhost',
    '127.0.0.1',
    ...(req.extraNames ?? []),
  ];
  const unique = [...new Set(names)];
  return { dns: unique.filter((n) => !IP_LIKE.test(n)), ips: unique.filter((n) => IP_LIKE.test(n)) };
}

export async function generateCertificates(req: CertificateRequest): Promise<GeneratedCertificates> {
  const notBeforeDate = new Date(Date.now() - 60_000); // tolerate small clock skew
  const notAfterDate = new Date(notBeforeDate.getTime() + (req.days ?? 365) * 86_400_000);
  const ca = await selfsigned.generate([{ name: 'commonName', value: `${req.service}-ca` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const { dns, ips } = sanNames(req);
  const leaf = await selfsigned.generate(
    [{ name: 'commonName', value: `${req.service}.${req.namespace}.svc` }],
    {
      keyType: 'ec',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      ca: { key: ca.private, cert: ca.cert },
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            ...dns.map((value) => ({ type: 2 as const, value })),
            ...ips.map((ip) => ({ type: 7 as const, ip })),
          ],
        },
      ],
    },
  );
  return {
    caCert: ca.cert,
    caKey: ca.private,
    cert: leaf.cert,
    key: leaf.private,
    dnsNames: dns,
    ipAddresses: ips,
  };
}
