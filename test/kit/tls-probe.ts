/** One TLS handshake with chosen protocol versions: what was negotiated, or why it failed. */
import { connect, type SecureVersion } from 'node:tls';

export type Handshake = { readonly protocol: string | null } | { readonly error: string };

/**
 * Legacy TLS 1.0/1.1 clients need OpenSSL security level 0 on Node 20 (SHA-1
 * signatures); with it a refusal can only come from the server's own minimum.
 */
export function legacyClient(version: 'TLSv1' | 'TLSv1.1') {
  return { minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' } as const;
}

export function handshake(
  port: number,
  versions: { minVersion?: SecureVersion; maxVersion?: SecureVersion; ciphers?: string } = {},
): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      rejectUnauthorized: false,
      ...versions,
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ error: 'no answer within 10 s' });
    }, 10_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      resolve({ protocol: socket.getProtocol() });
      socket.destroy();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ error: err.code ?? err.message });
    });
  });
}
