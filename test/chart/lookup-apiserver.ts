/**
 * A tiny API server for `helm template --dry-run=server`, whose `lookup` calls make two requests:
 * the discovery document of the group-version, then the GET of the object. Every other path is a
 * Kubernetes 404 Status, as a real API server answers for an object that does not exist.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DiscoveredResource {
  readonly name: string;
  readonly singularName: string;
  readonly namespaced: boolean;
  readonly kind: string;
}

export interface LookupApiserver {
  /** The URL to pass to `--kube-apiserver`. */
  readonly url: string;
  /** Every request, as `METHOD /path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * `discovery` maps a group-version path (`/api/v1`, `/apis/apiextensions.k8s.io/v1`) to its
 * resources; `object(path)` answers a GET with an object, or undefined for a 404.
 */
export async function startLookupApiserver(
  discovery: Readonly<Record<string, readonly DiscoveredResource[]>>,
  object: (path: string) => unknown,
): Promise<LookupApiserver> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    requests.push(`${req.method} ${path}`);
    res.setHeader('content-type', 'application/json');
    const resources = discovery[path];
    const groupVersion = path.replace(/^\/apis?\//, '');
    const found = resources ? undefined : object(path);
    if (resources) {
      const listed = resources.map((r) => ({ ...r, verbs: ['get', 'list'] }));
      res.end(JSON.stringify({ kind: 'APIResourceList', groupVersion, resources: listed }));
    } else if (found !== undefined) {
      res.end(JSON.stringify(found));
    } else {
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Status',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        }),
      );
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
