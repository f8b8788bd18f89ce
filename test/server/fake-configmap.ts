/**
 * The policy params ConfigMap as the fake API server serves it (a route of
 * test/kit/fake-apiserver.ts): GET answers it, a JSON merge patch of
 * `data` changes it, and `data` can be edited behind the sync's back (a hand
 * edit, or an old copy re-applied).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export class FakeConfigMap {
  data: Record<string, string> | undefined = undefined;
  /** performance.now() of every request, by method. */
  readonly gets: number[] = [];
  readonly patches: number[] = [];
  /** Content types of the patches. */
  readonly patchTypes: string[] = [];
  readonly path: string;

  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {
    this.path = `/api/v1/namespaces/${namespace}/configmaps/${name}`;
  }

  route = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (url.pathname !== this.path) return false;
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const object = () => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: this.name, namespace: this.namespace },
      ...(this.data ? { data: this.data } : {}),
    });
    if (req.method === 'GET') {
      this.gets.push(performance.now());
      send(200, object());
      return true;
    }
    if (req.method === 'PATCH') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.patches.push(performance.now());
        this.patchTypes.push(String(req.headers['content-type']));
        const patch = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Record<string, string> };
        this.data = { ...this.data, ...patch.data };
        send(200, object());
      });
      return true;
    }
    return false;
  };
}
