/**
 * The raw `node:http(s)` baseline's request handler: read the body, JSON.parse,
 * answer an allowing review with JSON.stringify. Shared by the HTTPS baseline
 * server (bench/baseline-server.ts) and the instruction-count driver
 * (bench/count-driver.ts), so both measure the same floor.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function rawNodeHandler(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let uid = '';
    try {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: { uid?: unknown } };
      uid = typeof review.request?.uid === 'string' ? review.request.uid : '';
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
      return;
    }
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid, allowed: true },
    });
    res
      .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      .end(body);
  });
}
