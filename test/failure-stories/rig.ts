/**
 * What the failure stories share: the chart rendered by the real helm, the
 * Gateway CRD patched by the built `crd-patch`, the built server started on
 * the chart's own certificate with the chart's rule flags, a set of Gateway
 * writes, and for each write the verdict of the admission model beside the
 * verdict of the webhook alone (its /mutate then /validate called directly,
 * as `review` answers them: no API server in between).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { FULLNAME, NAMESPACE, one, render, repoRoot, type RenderOptions } from '../chart/helm.js';
import { admit } from '../kit/admission-model/api-server.js';
import { Cluster } from '../kit/admission-model/cluster.js';
import { applyPatch, type PatchOp } from '../kit/admission-model/json-patch.js';
import { admissionRequest } from '../kit/admission-model/request.js';
import { matchedVersion } from '../kit/admission-model/rules.js';
import { entriesOf } from '../kit/admission-model/should-call.js';
import { prepareForStorage } from '../kit/admission-model/strategy.js';
import type { Backend, Obj, Verdict, Write } from '../kit/admission-model/types.js';
import { callWebhook, type ClientConfig } from '../kit/admission-model/webhook-client.js';
import { removeDir } from '../kit/key-files.js';
import { runCli, startServe, type RunningServer } from '../kit/server-process.js';

export const SERVICE_CIDR = '10.96.0.0/12';
/** For the unreachable story: deadlines at 1/100 of their seconds, so a 5 s timeout costs 50 ms. */
export const TIME_SCALE = 0.01;

export async function renderChart(opts: RenderOptions = {}): Promise<Obj[]> {
  return (await render(opts)) as Obj[];
}

/** The upstream Gateway CRD (v1.6.1) after `crd-patch --apply` (the provisional revision). */
export async function patchedCrd(): Promise<Obj> {
  const file = join(
    repoRoot,
    'test',
    'fixtures',
    'upstream',
    'gateway-api-v1.6.1',
    'crds',
    'standard-gateways.yaml',
  );
  const out = await runCli(['crd-patch', '--apply', file]);
  if (out.code !== 0) throw new Error(`crd-patch failed: ${out.stderr}`);
  return parse(out.stdout) as Obj;
}

/**
 * `policy` as docs/policy.md runs it, its objects in the printed order. The revision is given
 * (provisional, what `--gep-revision auto` reads from the cluster's crd-patch'ed CRD): the command
 * has no cluster to read here.
 */
export async function policyOutput(args: string[] = ['--service-cidr', SERVICE_CIDR]): Promise<Obj[]> {
  const out = await runCli(['policy', '--gep-revision', 'provisional', ...args]);
  if (out.code !== 0) throw new Error(`policy failed: ${out.stderr}`);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);
}

const RULE_FLAGS = [
  '--cluster-domain',
  '--gep-revision',
  '--spec-policy',
  '--status-policy',
  '--allowed-routability',
];

/** The rule flags of the chart's serve container. */
export function chartRuleFlags(docs: Obj[]): string[] {
  const deployment = one(docs as never, 'Deployment');
  const args = (deployment['spec'].template.spec.containers[0].args as string[]) ?? [];
  return args.filter((a) => RULE_FLAGS.some((f) => a.startsWith(`${f}=`)));
}

export interface Webhook {
  readonly server: RunningServer;
  stop(): Promise<void>;
}

/** The built server on the chart's Secret (the certificate its caBundle trusts), with the chart's rule flags. */
export async function startChartWebhook(docs: Obj[]): Promise<Webhook> {
  const secret = one(docs as never, 'Secret');
  const dir = mkdtempSync(join(tmpdir(), 'rw-story-'));
  const data = secret['data'] as Record<string, string>;
  writeFileSync(join(dir, 'tls.crt'), Buffer.from(data['tls.crt']!, 'base64'));
  writeFileSync(join(dir, 'tls.key'), Buffer.from(data['tls.key']!, 'base64'));
  try {
    const server = await startServe([
      '--tls-cert-file',
      join(dir, 'tls.crt'),
      '--tls-private-key-file',
      join(dir, 'tls.key'),
      '--service-cidr',
      SERVICE_CIDR,
      ...chartRuleFlags(docs),
    ]);
    return {
      server,
      stop: async () => {
        await server.stop();
        removeDir(dir);
      },
    };
  } catch (err) {
    removeDir(dir);
    throw err;
  }
}

/** A new cluster (default namespaces), the Gateway CRD, the namespace `apps` and the given objects applied. */
export function clusterWith(crd: Obj, objects: readonly Obj[], releaseNamespace = true): Cluster {
  const c = Cluster.fresh();
  c.apply(crd);
  c.addNamespace('apps', { team: 'web' });
  // helm install --create-namespace
  if (releaseNamespace) c.addNamespace(NAMESPACE);
  const { errors } = c.applyAll(objects);
  if (errors.length > 0) throw new Error(`apply failed: ${errors.join('; ')}`);
  return c;
}

export function setWebhookBackend(c: Cluster, backend: Backend): void {
  c.setBackend(NAMESPACE, FULLNAME, backend);
}

/** The webhook alone: /mutate, its patch, the registry strategy, /validate — as the chart's clientConfig reaches it. */
export async function webhookAlone(docs: Obj[], webhook: Webhook, write: Write): Promise<boolean> {
  const validating = one(docs as never, 'ValidatingWebhookConfiguration');
  const clientConfig = validating['webhooks'][0].clientConfig as ClientConfig;
  const backend: Backend = { kind: 'serving', port: webhook.server.port };
  const call = async (path: string, object: Obj) => {
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: admissionRequest({
        write,
        version: 'v1',
        object,
        ...(write.oldObject ? { oldObject: write.oldObject } : {}),
      }),
    };
    const cc = { ...clientConfig, service: { ...clientConfig.service!, path } };
    const r = await callWebhook(review, { clientConfig: cc, timeoutSeconds: 10, backend, timeScale: 1 });
    if (r.kind !== 'answer') throw new Error(`the webhook did not answer ${path}: ${r.reason}`);
    return r.answer;
  };
  const mutated = await call('/mutate', write.object);
  const ops = mutated.patch
    ? (JSON.parse(Buffer.from(mutated.patch, 'base64').toString('utf8')) as PatchOp[])
    : [];
  const object = prepareForStorage(write, applyPatch(write.object, ops));
  return (await call('/validate', object)).allowed;
}

/** failurePolicy of the validating entries that a CREATE of a Gateway with addresses reaches. */
export function specFailurePolicies(c: Cluster, write: Write): string[] {
  return entriesOf(c.validatingWebhooks)
    .filter((e) => matchedVersion(e.rules ?? [], e.matchPolicy, write) !== undefined)
    .map((e) => e.failurePolicy ?? 'Fail');
}

export interface Row {
  readonly label: string;
  readonly write: Write;
  readonly model: Verdict;
  readonly webhookAdmits: boolean;
}

/** Each write through the model (deadlines scaled by `timeScale`: only the unreachable story shortens them). */
export async function verdicts(
  c: Cluster,
  writes: readonly { label: string; write: Write }[],
  alone: (w: Write) => Promise<boolean>,
  timeScale = 1,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { label, write } of writes)
    rows.push({
      label,
      write,
      model: await admit(c, write, { timeScale }),
      webhookAdmits: await alone(write),
    });
  return rows;
}

export const refused = (rows: readonly Row[]) => rows.filter((r) => !r.model.allowed).map((r) => r.label);
/** Writes the API server refuses although the webhook alone admits them. */
export const refusedButWebhookAdmits = (rows: readonly Row[]) =>
  rows
    .filter((r) => !r.model.allowed && r.webhookAdmits)
    .map((r) => `${r.label}: ${r.model.refusal?.message ?? ''}`);
