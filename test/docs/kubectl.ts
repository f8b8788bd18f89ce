/**
 * What `kubectl apply -f FILE` prints for the Gateways in FILE when the webhook is installed,
 * built from the webhook's real answers (`routability-webhook review`, the same code `serve`
 * runs). Only the wrapping is modelled, as the apiserver and kubectl do it:
 * - a denial becomes `admission webhook "<name>" denied the request: <status.message>`, and kubectl
 *   prints `Error from server (<status.reason>): error when creating "<file>": <that>` after the
 *   objects it did create;
 * - an allowed object prints `<kind>.<group>/<name> created`, after its `Warning: ` lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli } from '../kit/server-process.js';

export const VALIDATING_WEBHOOK = 'validate.routability.gateway.networking.k8s.io';

interface Answer {
  response: { allowed: boolean; warnings?: string[]; status?: { reason?: string; message?: string } };
}

function reviewOf(object: Record<string, unknown>, index: number): string {
  const metadata = object['metadata'] as { name: string; namespace?: string };
  const [group, version] = String(object['apiVersion']).split('/');
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `00000000-0000-0000-0000-${String(index).padStart(12, '0')}`,
      kind: { group, version, kind: 'Gateway' },
      resource: { group, version, resource: 'gateways' },
      requestKind: { group, version, kind: 'Gateway' },
      requestResource: { group, version, resource: 'gateways' },
      name: metadata.name,
      namespace: metadata.namespace ?? 'default',
      operation: 'CREATE',
      userInfo: { username: 'reader' },
      object,
      oldObject: null,
      dryRun: false,
    },
  });
}

export async function kubectlApply(
  dir: string,
  file: string,
  reviewArgs: readonly string[],
): Promise<string> {
  const docs = parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  const out: string[] = [];
  const errors: string[] = [];
  for (const [i, object] of docs.entries()) {
    if (object?.['kind'] !== 'Gateway')
      throw new Error(`${file}: only Gateways are modelled, got ${String(object?.['kind'])}`);
    const run = await runCli(['review', ...reviewArgs], { input: reviewOf(object, i) });
    if (run.code !== 0) throw new Error(`review exited ${run.code}: ${run.stderr}`);
    const { response } = JSON.parse(run.stdout) as Answer;
    for (const w of response.warnings ?? []) out.push(`Warning: ${w}`);
    const name = (object['metadata'] as { name: string }).name;
    if (response.allowed) out.push(`gateway.gateway.networking.k8s.io/${name} created`);
    else
      errors.push(
        `Error from server (${response.status?.reason}): error when creating "${file}": admission webhook "${VALIDATING_WEBHOOK}" denied the request: ${response.status?.message}`,
      );
  }
  return [...out, ...errors].join('\n');
}
