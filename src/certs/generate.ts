/** A private CA and a serving certificate with the SANs the apiserver checks. */
import { X509Certificate } from 'node:crypto';
import selfsigned from 'selfsigned';

export interface CertificateRequest {
  /** Service name: SANs `<service>`, `<service>.<namespace>`, `<service>.<namespace>.svc`, and the cluster-domain form. */
  readonly service: string;
  readonly namespace: string;
  readonly clusterDomain?: string;
  /** Extra DNS and IP SANs; localhost and 127.0.0.1 are always included for local use. */
  readonly extraNames?: readonly string[];
  readonly days?: number;
  /** Validity of a new CA in days (default 3650): renewals sign with it until then, caBundle unchanged. */
  readonly caDays?: number;
  /**
   * Sign with this CA (PEM certificate and key) instead of a new one: a renewed serving certificate
   * that the caBundle already trusts, so renewing needs no caBundle change and causes no outage.
   */
  readonly ca?: { readonly cert: string; readonly key: string };
}

export interface GeneratedCertificates {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  /** The serving certificate's notAfter. */
  readonly notAfter: Date;
  /** The CA's notAfter: after it, renewing needs a new CA and a new caBundle. */
  readonly caNotAfter: Date;
  /** Whether the CA is new (else the one passed in was reused). */
  readonly newCa: boolean;
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

/** A new self-signed CA. */
async function newCa(
  service: string,
  notBeforeDate: Date,
  notAfterDate: Date,
): Promise<{ cert: string; key: string }> {
  const ca = await selfsigned.generate([{ name: 'commonName', value: `${service}-ca` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: ca.cert, key: ca.private };
}

export async function generateCertificates(req: CertificateRequest): Promise<GeneratedCertificates> {
  const notBeforeDate = new Date(Date.now() - 60_000); // tolerate small clock skew
  const wanted = new Date(notBeforeDate.getTime() + (req.days ?? 365) * 86_400_000);
  // A serving certificate never outlives the CA that signs it (a client would refuse it then).
  const caNotAfter = req.ca ? new Date(new X509Certificate(req.ca.cert).validTo) : undefined;
  const notAfterDate = caNotAfter && caNotAfter < wanted ? caNotAfter : wanted;
  const caUntil = new Date(
    notBeforeDate.getTime() + Math.max(req.caDays ?? 3650, req.days ?? 365) * 86_400_000,
  );
  const ca = req.ca ?? (await newCa(req.service, notBeforeDate, caUntil));
  const { dns, ips } = sanNames(req);
  const leaf = await selfsigned.generate(
    [{ name: 'commonName', value: `${req.service}.${req.namespace}.svc` }],
    {
      keyType: 'ec',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      ca: { key: ca.key, cert: ca.cert },
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
    caKey: ca.key,
    cert: leaf.cert,
    key: leaf.private,
    dnsNames: dns,
    ipAddresses: ips,
    notAfter: new Date(new X509Certificate(leaf.cert).validTo),
    caNotAfter: new Date(new X509Certificate(ca.cert).validTo),
    newCa: req.ca === undefined,
  };
}
