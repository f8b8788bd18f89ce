// The RBAC the chart renders is exactly what the code calls. Each row renders the chart with some
// values, runs the component the chart runs (its rendered arguments, as the ServiceAccount the chart
// gives its pod) against the fake API server, and drives it through every path that calls the API;
// the fake records each request. Then, for that ServiceAccount's rendered Roles and ClusterRoles:
// every request is allowed, every granted (group, resource, verb, name) was used, and a rule that
// could be limited by resourceNames is.
//
// Why the recorded requests rather than a declared list: they are what the code does, whichever
// module builds the path, so a call added anywhere shows up here without anyone declaring it.
// A new component (another pod with its own ServiceAccount) is one more row of COMPONENTS.
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REPORT_APIS } from '../../src/audit/reports.js';
import type { Enforcement } from '../../src/rules/types.js';
import { installDryRunAdmission, realWebhook } from '../kit/fake-admission.js';
import { FakeApiServer, gateway, serviceCidr } from '../kit/fake-apiserver.js';
import { FakeReports } from '../kit/fake-reports.js';
import { asStored, gatewayCrdWith } from '../kit/gateway-crd.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { runCli, startServeAgainstApi, type ServingAgainstApi } from '../kit/server-process.js';
import { eventually } from '../kit/eventually.js';
import { httpsPost } from '../kit/http.js';
import { helmBinary, NAMESPACE, render, type K8sObject, type RenderOptions } from './helm.js';
import { accessOf, compare, grantsOf, type Access } from './rbac.js';

const { skipReason } = helmBinary();
const GATEWAY_CRD = 'gateways.gateway.networking.k8s.io';

/** Accesses whose object names are data, so no rule can list them. */
const ANY_NAME = [
  // The allocated-IP check GETs the IPAddress named by each address under review.
  'get ipaddresses.networking.k8s.io',
  // verify's status step updates whichever Gateway of its namespace it lists first.
  'update gateways/status.gateway.networking.k8s.io',
];

interface Pod {
  readonly serviceAccount: string;
  readonly args: string[];
}

/** A process the chart runs, found in the rendered objects, and how to drive it through its API calls. */
interface Component {
  readonly name: string;
  readonly pod: (docs: K8sObject[]) => Pod | undefined;
  /** Drives the pod's process; `docs` are the rendered objects, for the ones it reads or deletes. */
  readonly exercise: (fake: FakeApiServer, pod: Pod, docs: K8sObject[]) => Promise<void>;
}

function podOf(docs: K8sObject[], kind: string, match: (o: K8sObject) => boolean): Pod | undefined {
  const found = docs.find((d) => d.kind === kind && match(d));
  if (!found) return undefined;
  const spec = (kind === 'Pod' ? found.spec : found.spec.template.spec) as {
    serviceAccountName: string;
    containers: { args: string[] }[];
  };
  return { serviceAccount: spec.serviceAccountName, args: spec.containers[0]!.args };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** The params ConfigMap: GET, and a merge patch of `data`. */
function configMapRoute(path: string, initial: Record<string, string> = {}) {
  let data = initial;
  return (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (url.pathname !== path || (req.method !== 'GET' && req.method !== 'PATCH')) return false;
    const send = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: path.split('/').pop() },
          data,
        }),
      );
    };
    if (req.method === 'GET') send();
    else {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        data = {
          ...data,
          ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Record<string, string> }).data,
        };
        send();
      });
    }
    return true;
  };
}

/** serve: the Deployment's arguments with local ports and certificates, and short Lease timings. */
async function exerciseServe(fake: FakeApiServer, pod: Pod): Promise<void> {
  const local = pod.args
    .slice(1)
    .filter((a) => !/^--(port|health-port|tls-cert-file|tls-private-key-file|client-ca-file)=/.test(a));
  const reportsFlag = local.find((a) => a.startsWith('--audit-reports='))?.split('=')[1];
  const reports =
    reportsFlag === 'policyreport' || reportsFlag === 'openreports'
      ? FakeReports.attach(fake, REPORT_APIS[reportsFlag])
      : undefined;
  const params = local.find((a) => a.startsWith('--policy-params='))?.split('=')[1];
  if (params) {
    const [ns, name] = params.split('/');
    fake.addRoute(configMapRoute(`/api/v1/namespaces/${ns}/configmaps/${name}`));
  }
  fake.crds.set(GATEWAY_CRD, asStored(gatewayCrdWith('provisional')));
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  const external = (name: string, value: string) =>
    fake.put(
      'gateways',
      gateway('apps', name, { spec: [{ type: 'IPAddress', value, routability: 'External' }] }),
    );
  external('a', '10.100.0.5');
  external('b', '10.101.0.5');
  const audits = local.some((a) => a.startsWith('--audit-lease='));
  const serving: ServingAgainstApi = await startServeAgainstApi(fake.kubeconfigPath, {
    prefix: 'rbac-contract-',
    // The last of a repeated flag wins: Lease renewals within a second or two.
    args: [...local, ...(audits ? ['--audit-lease-duration=3s', '--audit-lease-retry-period=1s'] : [])],
    env: { POD_NAMESPACE: NAMESPACE, POD_NAME: 'rw-0' },
  });
  let stopped = false;
  const stop = async () => {
    if (!stopped) await serving.stop();
    stopped = true;
  };
  cleanup.push(stop);
  const { server, ca } = serving;
  const passes = () => server.logs.filter((l) => l['msg'] === 'audit pass done').length;
  if (audits) await eventually(async () => passes() >= 1, 'an audit pass', 20_000, 50);
  // A review of a Cluster address: the allocated-IP check, when on, GETs its IPAddress.
  const review = gatewayReview({
    uid: 'rbac-1',
    object: defaultGateway([{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }]),
  });
  await eventually(
    async () =>
      (await httpsPost(server.port, '/validate?timeout=10s', JSON.stringify(review), { ca })).status === 200,
    'an answered review',
    20_000,
    100,
  );
  if (reports) {
    // One report created (a fails), updated (b fails too), deleted (both clean again).
    fake.put('servicecidrs', serviceCidr('extra-a', ['10.100.0.0/16']));
    await eventually(
      async () => reports.writes.some((w) => w.method === 'POST'),
      'the report created',
      20_000,
      50,
    );
    fake.put('servicecidrs', serviceCidr('extra-b', ['10.101.0.0/16']));
    await eventually(
      async () => reports.writes.some((w) => w.method === 'PUT'),
      'the report updated',
      20_000,
      50,
    );
    fake.remove('servicecidrs', 'extra-a');
    fake.remove('servicecidrs', 'extra-b');
    await eventually(
      async () => reports.writes.some((w) => w.method === 'DELETE'),
      'the report deleted',
      20_000,
      50,
    );
  }
  if (params)
    await eventually(
      async () => fake.requests.some((r) => r.method === 'PATCH' && r.path.includes('/configmaps/')),
      'the params PATCH',
      20_000,
      50,
    );
  if (audits) {
    // Renewals: the Lease read and updated after it was created.
    await eventually(
      async () => fake.requests.filter((r) => r.method === 'PUT' && r.path.includes('/leases/')).length >= 2,
      'the Lease renewals',
      20_000,
      50,
    );
  }
  await stop();
}

/** crd-patch: the hook Job's arguments against a CRD without the field. */
async function exerciseCrdPatch(fake: FakeApiServer, pod: Pod): Promise<void> {
  fake.crds.set(GATEWAY_CRD, asStored(gatewayCrdWith('none')));
  const r = await runCli([...pod.args, '--kubeconfig', fake.kubeconfigPath], { env: { KUBECONFIG: '' } });
  expect(r.code, r.stderr).toBe(0);
}

const ADMISSION = 'admissionregistration.k8s.io';
const component = (d: K8sObject) => d.metadata.labels?.['app.kubernetes.io/component'];
const flag = (args: string[], name: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/**
 * verify (the helm test Pod): its arguments against dry-run admission by the real webhook, a stored
 * Gateway in its namespace (the status step updates it) and, in policy mode, the rendered bindings,
 * policies and params ConfigMap (with the ranges serve writes into it). Every step must pass.
 */
async function exerciseVerify(fake: FakeApiServer, pod: Pod, docs: K8sObject[]): Promise<void> {
  fake.crds.set(GATEWAY_CRD, asStored(gatewayCrdWith('provisional')));
  const namespace = flag(pod.args, 'namespace') ?? 'default';
  fake.put(
    'gateways',
    gateway(namespace, 'web', { spec: [{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }] }),
  );
  const specPolicy = flag(pod.args, 'spec-policy') as Enforcement | undefined;
  installDryRunAdmission(fake, [
    realWebhook(flag(pod.args, 'webhook-name'), specPolicy ? { specPolicy } : {}),
  ]);
  fake.define('validatingadmissionpolicies', ADMISSION, 'ValidatingAdmissionPolicy', ['v1']);
  fake.define('validatingadmissionpolicybindings', ADMISSION, 'ValidatingAdmissionPolicyBinding', ['v1']);
  for (const d of docs.filter((o) => o.kind === 'ValidatingAdmissionPolicy'))
    fake.put('validatingadmissionpolicies', d);
  const params = new Set<string>();
  for (const d of docs.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding')) {
    fake.put('validatingadmissionpolicybindings', d);
    const ref = d.spec.paramRef as { name: string; namespace: string };
    params.add(`${ref.namespace}/${ref.name}`);
  }
  for (const cm of docs.filter((o) => o.kind === 'ConfigMap')) {
    const { name, namespace } = cm.metadata;
    if (!params.has(`${namespace}/${name}`)) continue;
    // The ranges serve writes into the params (the chart writes them only without the webhook).
    const data = { serviceCIDRs: '10.96.0.0/12', ...cm['data'] };
    fake.addRoute(configMapRoute(`/api/v1/namespaces/${namespace}/configmaps/${name}`, data));
  }
  const r = await runCli([...pod.args, '--kubeconfig', fake.kubeconfigPath], { env: { KUBECONFIG: '' } });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).not.toMatch(/^(FAILED|not proven) /m);
}

const ADMISSION_KINDS: Record<string, string> = {
  ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

/** disarm (the pre-delete Job): its arguments against the rendered admission objects; each is deleted. */
async function exerciseDisarm(fake: FakeApiServer, pod: Pod, docs: K8sObject[]): Promise<void> {
  const stored = new Set(
    docs.filter((d) => ADMISSION_KINDS[d.kind]).map((d) => `${ADMISSION_KINDS[d.kind]}/${d.metadata.name}`),
  );
  fake.addRoute((req, res, url) => {
    const m = /^\/apis\/admissionregistration\.k8s\.io\/v1\/([^/]+\/[^/]+)$/.exec(url.pathname);
    if (!m || req.method !== 'DELETE') return false;
    const key = decodeURIComponent(m[1]!);
    const found = stored.delete(key);
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ kind: 'Status', status: found ? 'Success' : 'Failure', code: found ? 200 : 404 }),
    );
    return true;
  });
  const r = await runCli([...pod.args, '--kubeconfig', fake.kubeconfigPath], { env: { KUBECONFIG: '' } });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).not.toMatch(/already gone/);
}

const COMPONENTS: Component[] = [
  {
    name: 'serve (the Deployment)',
    pod: (docs) => podOf(docs, 'Deployment', () => true),
    exercise: exerciseServe,
  },
  {
    name: 'crd-patch (the hook Job)',
    pod: (docs) => podOf(docs, 'Job', (j) => j.metadata.name.endsWith('crd-patch')),
    exercise: exerciseCrdPatch,
  },
  {
    name: 'verify (the helm test Pod)',
    pod: (docs) => podOf(docs, 'Pod', (p) => component(p) === 'verify'),
    exercise: exerciseVerify,
  },
  {
    name: 'disarm (the pre-delete Job)',
    pod: (docs) => podOf(docs, 'Job', (j) => component(j) === 'disarm'),
    exercise: exerciseDisarm,
  },
];

/** The value combinations that change what the components call. */
const VALUES: [string, RenderOptions][] = [
  ['defaults', {}],
  [
    'audit reports: policyreport, the policy params',
    { set: { 'webhook.audit.reports': 'policyreport' }, setJson: { 'policy.enabled': true } },
  ],
  ['audit reports: openreports', { set: { 'webhook.audit.reports': 'openreports' } }],
  [
    'no cluster reads (fixed ranges, revision; no allocated-IP check, no audit)',
    {
      set: { 'webhook.gepRevision': 'provisional', 'webhook.audit.interval': '0' },
      setJson: { 'webhook.serviceCIDRs': ['10.96.0.0/12'], 'webhook.checkAllocatedIPs': false },
    },
  ],
  ['the CRD patch Job', { setJson: { 'crdPatch.enabled': true } }],
  [
    'policy mode on Kubernetes 1.33 (bindings, policies, params)',
    { setJson: { 'policy.enabled': true }, extraArgs: ['--kube-version', '1.33.0'] },
  ],
];

const ROWS = VALUES.flatMap(([values, opts]) =>
  COMPONENTS.map((c) => [`${c.name}, ${values}`, c, opts] as const),
);

describe.skipIf(skipReason !== undefined)('RBAC: the chart grants what the code calls, no more', () => {
  it.each(ROWS)(
    '%s',
    async (_name, component, opts) => {
      const docs = await render({ ...opts, lifecycleHooks: true });
      const pod = component.pod(docs);
      if (!pod) return; // not rendered with these values: nothing runs, nothing to grant
      const fake = await FakeApiServer.start();
      cleanup.push(() => fake.close());
      await component.exercise(fake, pod, docs);
      const accesses = fake.requests.map(accessOf).filter((a): a is Access => a !== undefined);
      const result = compare(accesses, grantsOf(docs, pod.serviceAccount, NAMESPACE), ANY_NAME);
      expect(result).toEqual({ denied: [], unused: [], unnamed: [] });
    },
    120_000,
  );
});

describe('the RBAC comparison', () => {
  const grant = (rule: object, namespace?: string) => ({ role: 'Role r', namespace, rule: rule as never });
  const access = (a: Partial<Access>): Access => ({
    group: 'g',
    resource: 'things',
    verb: 'get',
    namespace: undefined,
    name: undefined,
    ...a,
  });

  it('reads verbs, names and field selectors from requests as the API server does', () => {
    const at = (method: string, path: string, query: Record<string, string> = {}) =>
      accessOf({ method, path, query });
    expect(at('GET', '/apis/networking.k8s.io/v1/ipaddresses/10.0.0.1')).toEqual(
      access({ group: 'networking.k8s.io', resource: 'ipaddresses', name: '10.0.0.1' }),
    );
    expect(
      at('GET', '/apis/x.io/v1/crds', { watch: 'true', fieldSelector: 'metadata.name=a' }),
    ).toMatchObject({
      verb: 'watch',
      name: 'a',
    });
    expect(at('POST', '/apis/x.io/v1/namespaces/n/things')).toMatchObject({ verb: 'create', namespace: 'n' });
    expect(at('PATCH', '/api/v1/namespaces/n/configmaps/c')).toMatchObject({
      group: '',
      verb: 'patch',
      name: 'c',
    });
    expect(at('DELETE', '/apis/x.io/v1/namespaces/n/things/t')).toMatchObject({ verb: 'delete', name: 't' });
    expect(at('GET', '/apis')).toBeUndefined();
  });

  it('flags a denied request, an unused verb, and a rule that could name its object', () => {
    const rules = [grant({ apiGroups: ['g'], resources: ['things'], verbs: ['get', 'watch'] })];
    expect(compare([access({ name: 't' }), access({ verb: 'list' })], rules, [])).toEqual({
      denied: ['list things.g'],
      unused: ['Role r: watch things.g'],
      unnamed: ['Role r: get things.g (every request named t)'],
    });
    expect(compare([access({ name: 't' })], rules.slice(0, 1), ['get things.g']).unnamed).toEqual([]);
  });

  it('a Role grants in its namespace only; resourceNames never allow an unnamed request', () => {
    const named = grant(
      { apiGroups: ['g'], resources: ['things'], verbs: ['create', 'get'], resourceNames: ['t'] },
      'n',
    );
    expect(
      compare(
        [access({ verb: 'create', namespace: 'n' }), access({ namespace: 'm', name: 't' })],
        [named],
        [],
      ).denied,
    ).toEqual(['create things.g in n', 'get things.g in m named t']);
  });
});
