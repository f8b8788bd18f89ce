/**
 * For the model's own tests: an HTTPS webhook whose answers a test scripts
 * (allow, deny, patch, a wrong uid, a slow answer), on a certificate for
 * `<service>.<namespace>.svc`, and a port that accepts connections and never
 * answers (a host behind a NetworkPolicy that drops packets). The failure
 * stories use the real built server instead.
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { generateCertificates } from '../../../src/certs/generate.js';

export interface ReviewRequest {
  readonly uid: string;
  readonly operation: string;
  readonly subResource?: string;
  readonly dryRun: boolean;
  readonly kind: { version: string };
  readonly object: Record<string, unknown>;
  readonly oldObject: Record<string, unknown> | null;
  readonly userInfo: { username: string };
}

export type Script = (request: ReviewRequest, path: string) => Record<string, unknown> | 'hang';

export interface ScriptedWebhook {
  readonly port: number;
  /** base64 PEM of the CA that signed the serving certificate (a caBundle). */
  readonly caBundle: string;
  /** Every request received, with its path. */
  readonly received: { path: string; request: ReviewRequest }[];
  setScript(script: Script): void;
  close(): Promise<void>;
}

export const allow: Script = (r) => ({ uid: r.uid, allowed: true });

export async function startScriptedWebhook(service: string, namespace: string): Promise<ScriptedWebhook> {
  const certs = await generateCertificates({ service, namespace });
  let script: Script = allow;
  const received: ScriptedWebhook['received'] = [];
  const server: Server = createHttpsServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: ReviewRequest };
      received.push({ path: req.url ?? '', request: review.request });
      const answer = script(review.request, req.url ?? '');
      if (answer === 'hang') return;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: answer }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    caBundle: Buffer.from(certs.caCert).toString('base64'),
    received,
    setScript: (s) => (script = s),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that accepts TCP connections and never sends a byte. */
export async function startSilentPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
