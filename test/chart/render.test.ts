// helm template output, parsed and checked against what the issue and the server contract require.
import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FULLNAME, NAMESPACE, all, helmBinary, one, render, renderError, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const b64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');

function container(docs: K8sObject[]) {
  return one(docs, 'Deployment').spec.template.spec.containers[0];
}

/** The value of `--flag=value` arguments (all of them, for repeatable flags). */
function flagValues(args: string[], flag: string): string[] {
  return args.filter((a) => a.startsWith(`--${flag}=`)).map((a) => a.slice(flag.length + 3));
}

describe.skipIf(skipReason !== undefined)('default values', () => {
  let docs: K8sObject[];
  beforeAll(async () => {
    docs = await render();
  });

  it('renders exactly the expected objects', () => {
    const kinds = docs.map((d) => d.kind).sort();
    expect(kinds).toEqual(
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'Deployment',
        'MutatingWebhookConfiguration',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'Secret',
        'Service',
        'ServiceAccount',
        'ValidatingWebhookConfiguration',
      ].sort(),
    );
    for (const d of docs) {
      if (
        ![
          'ClusterRole',
          'ClusterRoleBinding',
          'ValidatingWebhookConfiguration',
          'MutatingWebhookConfiguration',
        ].includes(d.kind)
      ) {
        expect(d.metadata.namespace, `${d.kind} namespace`).toBe(NAMESPACE);
      }
      expect(d.metadata.labels?.['app.kubernetes.io/instance']).toBe('rw');
    }
  });

  describe('Deployment', () => {
    it('runs 2 replicas with a surge-only rollout', () => {
      const dep = one(docs, 'Deployment');
      expect(dep.spec.replicas).toBe(2);
      expect(dep.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
      expect(dep.spec.selector.matchLabels).toEqual(dep.spec.template.metadata.labels);
    });

    it('spreads replicas across nodes', () => {
      const dep = one(docs, 'Deployment');
      const [spread, ...rest] = dep.spec.template.spec.topologySpreadConstraints;
      expect(rest).toEqual([]);
      expect(spread.topologyKey).toBe('kubernetes.io/hostname');
      expect(spread.maxSkew).toBe(1);
      expect(spread.labelSelector.matchLabels).toEqual(dep.spec.selector.matchLabels);
    });

    it('has no priorityClassName unless set', () => {
      expect(one(docs, 'Deployment').spec.template.spec.priorityClassName).toBeUndefined();
    });

    it('runs under the restricted Pod Security profile', () => {
      const pod = one(docs, 'Deployment').spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(pod.hostNetwork).toBeUndefined();
      const sc = pod.containers[0].securityContext;
      expect(sc.runAsNonRoot).toBe(true);
      expect(sc.runAsUser).toBeGreaterThan(0);
      expect(sc.readOnlyRootFilesystem).toBe(true);
      expect(sc.allowPrivilegeEscalation).toBe(false);
      expect(sc.privileged).toBe(false);
      expect(sc.capabilities).toEqual({ drop: ['ALL'] });
      expect(sc.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    });

    it('sets resource requests and a memory limit', () => {
      const { resources } = container(docs);
      expect(resources.requests.cpu).toBeDefined();
      expect(resources.requests.memory).toBeDefined();
      expect(resources.limits.memory).toBeDefined();
    });

    it('passes every server flag with its default', () => {
      const c = container(docs);
      expect(c.args[0]).toBe('serve');
      expect(c.command).toBeUndefined(); // the image entrypoint runs routability-webhook
      expect(c.args).toEqual([
        'serve',
        '--port=8443',
        '--health-port=8080',
        '--tls-cert-file=/tls/tls.crt',
        '--tls-private-key-file=/tls/tls.key',
        '--cluster-domain=cluster.local',
        '--gep-revision=auto',
        '--spec-policy=enforce',
        '--status-policy=warn',
        '--check-allocated-ips',
        '--log-level=info',
        '--shutdown-timeout-seconds=10',
        '--audit-interval=5m',
        `--audit-lease=${FULLNAME}-audit`,
        '--audit-reports=none',
        '--audit-lease-duration=15s',
        '--audit-lease-retry-period=5s',
        '--max-connections=1000',
        '--max-inflight-body-bytes=8388608',
      ]);
      expect(c.args).not.toContain('--dev');
      expect(flagValues(c.args, 'service-cidr')).toEqual([]);
    });

    it('probes the health port, not the TLS port', () => {
      const c = container(docs);
      const health = c.ports.find((p: { name: string }) => p.name === 'health');
      const https = c.ports.find((p: { name: string }) => p.name === 'https');
      expect(health.containerPort).toBe(8080);
      expect(https.containerPort).toBe(8443);
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        expect(probe.httpGet.scheme ?? 'HTTP').toBe('HTTP');
      }
    });

    it('waits in preStop, and its grace period covers preStop plus the server shutdown', () => {
      const pod = one(docs, 'Deployment').spec.template.spec;
      const c = pod.containers[0];
      const preStop = c.lifecycle.preStop.sleep.seconds as number;
      const shutdown = Number(flagValues(c.args, 'shutdown-timeout-seconds')[0]);
      expect(preStop).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + shutdown);
    });

    it('mounts the TLS Secret as a directory (no subPath, so renewals reload)', () => {
      const pod = one(docs, 'Deployment').spec.template.spec;
      const c = pod.containers[0];
      const mount = c.volumeMounts.find((m: { name: string }) => m.name === 'tls');
      expect(mount).toEqual({ name: 'tls', mountPath: '/tls', readOnly: true });
      for (const m of c.volumeMounts) expect(m.subPath).toBeUndefined();
      const volume = pod.volumes.find((v: { name: string }) => v.name === 'tls');
      expect(volume.secret.secretName).toBe(`${FULLNAME}-tls`);
      expect(flagValues(c.args, 'tls-cert-file')).toEqual(['/tls/tls.crt']);
      expect(flagValues(c.args, 'tls-private-key-file')).toEqual(['/tls/tls.key']);
      // A writable /tmp despite the read-only root filesystem.
      expect(c.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/tmp')).toBe(true);
    });

    it('mounts the service account token because it watches the cluster', () => {
      const pod = one(docs, 'Deployment').spec.template.spec;
      expect(pod.serviceAccountName).toBe(one(docs, 'ServiceAccount').metadata.name);
      expect(pod.automountServiceAccountToken).toBe(true);
    });
  });

  it('PodDisruptionBudget keeps one replica and selects the pods', () => {
    const pdb = one(docs, 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(one(docs, 'Deployment').spec.selector.matchLabels);
  });

  it('Service maps 443 to the TLS port and selects the pods', () => {
    const svc = one(docs, 'Service');
    expect(svc.metadata.name).toBe(FULLNAME);
    const https = svc.spec.ports.find((p: { name: string }) => p.name === 'https');
    expect(https).toMatchObject({ port: 443, targetPort: 'https', protocol: 'TCP' });
    expect(svc.spec.selector).toEqual(one(docs, 'Deployment').spec.selector.matchLabels);
  });

  it('ClusterRole grants only list/watch on servicecidrs, ipaddresses and (for the audit) gateways, and reads on the Gateway CRD by name', () => {
    const role = one(docs, 'ClusterRole');
    expect(role.rules).toEqual([
      { apiGroups: ['networking.k8s.io'], resources: ['servicecidrs'], verbs: ['list', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ipaddresses'], verbs: ['get'] },
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways'], verbs: ['list'] },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gateways.gateway.networking.k8s.io'],
        verbs: ['list', 'watch'],
      },
    ]);
    const binding = one(docs, 'ClusterRoleBinding');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: role.metadata.name,
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: one(docs, 'ServiceAccount').metadata.name, namespace: NAMESPACE },
    ]);
  });

  it('the audit Lease: a Role that may create leases, and get/update only its own', () => {
    const role = one(docs, 'Role');
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [`${FULLNAME}-audit`],
        verbs: ['get', 'update'],
      },
    ]);
    expect(one(docs, 'RoleBinding').roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role.metadata.name,
    });
    const env = one(docs, 'Deployment').spec.template.spec.containers[0].env;
    expect(env.map((e: { name: string }) => e.name)).toEqual(['POD_NAME', 'POD_NAMESPACE', 'NODE_OPTIONS']);
  });

  describe('ValidatingWebhookConfiguration', () => {
    it('has two entries (spec, status) with the default names, path, and safe protocol settings', () => {
      const vwc = one(docs, 'ValidatingWebhookConfiguration');
      expect(vwc.metadata.name).toBe(FULLNAME);
      expect(vwc.webhooks.map((w: { name: string }) => w.name)).toEqual([
        'validate.routability.gateway.networking.k8s.io',
        'validate-status.routability.gateway.networking.k8s.io',
      ]);
      for (const wh of vwc.webhooks) {
        expect(wh.admissionReviewVersions).toEqual(['v1']);
        expect(wh.sideEffects).toBe('None');
        expect(wh.matchPolicy).toBe('Equivalent');
        // Fail-open until the install is proven (spec), and always under statusPolicy warn (status).
        expect(wh.failurePolicy).toBe('Ignore');
        expect(wh.timeoutSeconds).toBe(5);
        expect(wh.objectSelector).toBeUndefined();
        expect(wh.clientConfig.service).toEqual({
          name: FULLNAME,
          namespace: NAMESPACE,
          path: '/validate',
          port: 443,
        });
        expect(wh.clientConfig.url).toBeUndefined();
      }
    });

    it('matches CREATE/UPDATE of gateways (first entry) and UPDATE of gateways/status (second) in v1 and v1beta1', () => {
      const [spec, status] = one(docs, 'ValidatingWebhookConfiguration').webhooks;
      expect(spec.rules).toEqual([
        {
          apiGroups: [GATEWAY_GROUP],
          apiVersions: ['v1', 'v1beta1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['gateways'],
          scope: 'Namespaced',
        },
      ]);
      expect(status.rules).toEqual([
        {
          apiGroups: [GATEWAY_GROUP],
          apiVersions: ['v1', 'v1beta1'],
          operations: ['UPDATE'],
          resources: ['gateways/status'],
          scope: 'Namespaced',
        },
      ]);
    });

    it('excludes kube-system and its own namespace', () => {
      for (const { namespaceSelector } of one(docs, 'ValidatingWebhookConfiguration').webhooks)
        expect(namespaceSelector).toEqual({
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', NAMESPACE] },
          ],
        });
    });

    it('has named matchConditions for the spec and the status path, one per entry', () => {
      const names = one(docs, 'ValidatingWebhookConfiguration').webhooks.map(
        (w: { matchConditions: { name: string }[] }) => w.matchConditions.map((c) => c.name),
      );
      expect(names).toEqual([['spec-addresses-name-a-routability'], ['status-has-addresses-or-assignment']]);
    });
  });

  describe('MutatingWebhookConfiguration', () => {
    it('defaults status only: UPDATE gateways/status, never reinvoked', () => {
      const mwc = one(docs, 'MutatingWebhookConfiguration');
      expect(mwc.metadata.name).toBe(FULLNAME);
      const [wh, ...rest] = mwc.webhooks;
      expect(rest).toEqual([]);
      expect(wh.name).toBe('mutate.routability.gateway.networking.k8s.io');
      expect(wh.reinvocationPolicy).toBe('Never');
      expect(wh.sideEffects).toBe('None');
      expect(wh.admissionReviewVersions).toEqual(['v1']);
      expect(wh.matchPolicy).toBe('Equivalent');
      expect(wh.clientConfig.service).toEqual({
        name: FULLNAME,
        namespace: NAMESPACE,
        path: '/mutate',
        port: 443,
      });
      expect(wh.rules).toEqual([
        {
          apiGroups: [GATEWAY_GROUP],
          apiVersions: ['v1', 'v1beta1'],
          operations: ['UPDATE'],
          resources: ['gateways/status'],
          scope: 'Namespaced',
        },
      ]);
      expect(wh.namespaceSelector).toEqual(
        one(docs, 'ValidatingWebhookConfiguration').webhooks[0].namespaceSelector,
      );
      expect(wh.matchConditions).toHaveLength(1);
    });
  });

  describe('TLS (helm mode)', () => {
    it('generates a CA and a serving certificate with the SANs the apiserver checks', () => {
      const secret = one(docs, 'Secret');
      expect(secret.type).toBe('kubernetes.io/tls');
      expect(secret.metadata.name).toBe(`${FULLNAME}-tls`);
      const ca = new X509Certificate(b64(secret.data['ca.crt']));
      const cert = new X509Certificate(b64(secret.data['tls.crt']));
      expect(ca.ca).toBe(true);
      expect(cert.ca).toBe(false);
      expect(cert.checkIssued(ca)).toBe(true);
      expect(cert.verify(ca.publicKey)).toBe(true);
      const sans = (cert.subjectAltName ?? '').split(', ').sort();
      expect(sans).toEqual(
        [
          `DNS:${FULLNAME}`,
          `DNS:${FULLNAME}.${NAMESPACE}`,
          `DNS:${FULLNAME}.${NAMESPACE}.svc`,
          `DNS:${FULLNAME}.${NAMESPACE}.svc.cluster.local`,
        ].sort(),
      );
      expect(cert.checkHost(`${FULLNAME}.${NAMESPACE}.svc`)).toBe(`${FULLNAME}.${NAMESPACE}.svc`);
      expect(b64(secret.data['tls.key'])).toMatch(/-----BEGIN (RSA |EC )?PRIVATE KEY-----/);
      expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
    });

    it('puts the same CA into both webhook configurations', () => {
      const ca = one(docs, 'Secret').data['ca.crt'];
      expect(one(docs, 'ValidatingWebhookConfiguration').webhooks[0].clientConfig.caBundle).toBe(ca);
      expect(one(docs, 'MutatingWebhookConfiguration').webhooks[0].clientConfig.caBundle).toBe(ca);
      expect(one(docs, 'ValidatingWebhookConfiguration').metadata.annotations).toBeUndefined();
    });

    it('follows webhook.clusterDomain in the SANs', async () => {
      const other = await render({ set: { 'webhook.clusterDomain': 'corp.internal' } });
      const cert = new X509Certificate(b64(one(other, 'Secret').data['tls.crt']));
      expect(cert.subjectAltName).toContain(`DNS:${FULLNAME}.${NAMESPACE}.svc.corp.internal`);
      expect(cert.subjectAltName).not.toContain('cluster.local');
    });
  });
});

describe.skipIf(skipReason !== undefined)('TLS via cert-manager', () => {
  it('builds its own CA chain and injects the CA into both configurations', async () => {
    const docs = await render({ valuesFiles: ['cert-manager-values.yaml'] });
    expect(all(docs, 'Secret')).toEqual([]);
    const issuers = all(docs, 'Issuer');
    expect(issuers.map((i) => i.metadata.name).sort()).toEqual([`${FULLNAME}-ca`, `${FULLNAME}-selfsigned`]);
    expect(one(docs, 'Issuer', `${FULLNAME}-selfsigned`).spec).toEqual({ selfSigned: {} });
    expect(one(docs, 'Issuer', `${FULLNAME}-ca`).spec.ca.secretName).toBe(`${FULLNAME}-ca`);
    const caCert = one(docs, 'Certificate', `${FULLNAME}-ca`);
    expect(caCert.spec.isCA).toBe(true);
    expect(caCert.spec.issuerRef).toMatchObject({ kind: 'Issuer', name: `${FULLNAME}-selfsigned` });

    const serving = one(docs, 'Certificate', FULLNAME);
    expect(serving.apiVersion).toBe('cert-manager.io/v1');
    expect(serving.spec.secretName).toBe(`${FULLNAME}-tls`);
    expect(serving.spec.issuerRef).toEqual({
      group: 'cert-manager.io',
      kind: 'Issuer',
      name: `${FULLNAME}-ca`,
    });
    expect(serving.spec.dnsNames).toEqual([
      FULLNAME,
      `${FULLNAME}.${NAMESPACE}`,
      `${FULLNAME}.${NAMESPACE}.svc`,
      `${FULLNAME}.${NAMESPACE}.svc.cluster.local`,
    ]);
    expect(serving.spec.usages).toContain('server auth');
    expect(serving.spec.commonName).toBeUndefined(); // SANs only: a CN alone is rejected anyway

    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const cfg = one(docs, kind);
      expect(cfg.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(`${NAMESPACE}/${FULLNAME}`);
      expect(cfg.webhooks[0].clientConfig.caBundle).toBeUndefined();
    }
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.volumes.find((v: { name: string }) => v.name === 'tls').secret.secretName).toBe(
      `${FULLNAME}-tls`,
    );
  });

  it('uses an existing ClusterIssuer when issuerRef is set', async () => {
    const docs = await render({ valuesFiles: ['cert-manager-issuer-values.yaml'] });
    expect(all(docs, 'Issuer')).toEqual([]);
    const serving = one(docs, 'Certificate');
    expect(serving.spec.issuerRef).toEqual({
      group: 'cert-manager.io',
      kind: 'ClusterIssuer',
      name: 'corp-ca',
    });
    expect(serving.spec.secretName).toBe('webhook-serving-cert');
    expect(serving.spec.duration).toBe('720h');
    expect(serving.spec.renewBefore).toBe('240h');
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.volumes.find((v: { name: string }) => v.name === 'tls').secret.secretName).toBe(
      'webhook-serving-cert',
    );
    expect(
      one(docs, 'ValidatingWebhookConfiguration').metadata.annotations?.['cert-manager.io/inject-ca-from'],
    ).toBe(`${NAMESPACE}/${FULLNAME}`);
  });
});

describe.skipIf(skipReason !== undefined)('TLS from an existing Secret', () => {
  it('mounts that Secret and puts the given CA (PEM in values) base64-encoded into both configurations', async () => {
    const docs = await render({ valuesFiles: ['existing-secret-values.yaml'] });
    expect(all(docs, 'Secret')).toEqual([]);
    expect(all(docs, 'Certificate')).toEqual([]);
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.volumes.find((v: { name: string }) => v.name === 'tls').secret.secretName).toBe(
      'my-webhook-tls',
    );
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const bundle = one(docs, kind).webhooks[0].clientConfig.caBundle as string;
      const ca = new X509Certificate(b64(bundle));
      expect(ca.subject).toBe('CN=ci-example-ca');
      expect(one(docs, kind).metadata.annotations).toBeUndefined();
    }
  });

  it('accepts a caBundle that is already base64', async () => {
    const pem = (await render({ valuesFiles: ['existing-secret-values.yaml'] })).find(
      (d) => d.kind === 'ValidatingWebhookConfiguration',
    )?.webhooks[0].clientConfig.caBundle as string;
    const docs = await render({
      set: {
        'tls.mode': 'existingSecret',
        'tls.existingSecret.name': 's',
        'tls.existingSecret.caBundle': pem,
      },
    });
    expect(one(docs, 'ValidatingWebhookConfiguration').webhooks[0].clientConfig.caBundle).toBe(pem);
  });
});

describe.skipIf(skipReason !== undefined)('overrides (ci/overrides-values.yaml)', () => {
  let docs: K8sObject[];
  beforeAll(async () => {
    docs = await render({ valuesFiles: ['overrides-values.yaml'] });
  });

  it('passes every server flag from values', () => {
    const c = container(docs);
    expect(flagValues(c.args, 'port')).toEqual(['9443']);
    expect(flagValues(c.args, 'health-port')).toEqual(['9090']);
    expect(flagValues(c.args, 'service-cidr')).toEqual(['10.96.0.0/12', 'fd00:10:96::/112']);
    expect(flagValues(c.args, 'cluster-domain')).toEqual(['corp.internal']);
    expect(flagValues(c.args, 'spec-policy')).toEqual(['warn']);
    expect(flagValues(c.args, 'status-policy')).toEqual(['enforce']);
    expect(flagValues(c.args, 'allowed-routability')).toEqual(['example.com/CorpWan', 'example.com/Dmz']);
    expect(c.args).toContain('--no-check-allocated-ips');
    expect(c.args).not.toContain('--check-allocated-ips');
    expect(flagValues(c.args, 'log-level')).toEqual(['debug']);
    expect(flagValues(c.args, 'shutdown-timeout-seconds')).toEqual(['20']);
    expect(flagValues(c.args, 'client-ca-file')).toEqual(['/client-ca/ca.crt']);
    expect(flagValues(c.args, 'audit-interval')).toEqual(['0']);
    expect(flagValues(c.args, 'audit-lease')).toEqual([]);
    expect(c.env.slice(2)).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=192' }]);
  });

  it('moves ports, probes and the Service with the flags', () => {
    const c = container(docs);
    expect(c.ports.map((p: { containerPort: number }) => p.containerPort).sort()).toEqual([9090, 9443]);
    expect(c.readinessProbe.httpGet.port).toBe('health');
    const svc = one(docs, 'Service');
    expect(svc.spec.ports.find((p: { name: string }) => p.name === 'https')).toMatchObject({
      port: 443,
      targetPort: 'https',
    });
  });

  it('mounts the client CA ConfigMap for mTLS', () => {
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.volumes.find((v: { name: string }) => v.name === 'client-ca').configMap.name).toBe(
      'apiserver-client-ca',
    );
    expect(
      pod.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'client-ca').mountPath,
    ).toBe('/client-ca');
  });

  it('needs no cluster access with service CIDRs given, the allocated-IP check and the audit off', () => {
    expect(all(docs, 'ClusterRole')).toEqual([]);
    expect(all(docs, 'ClusterRoleBinding')).toEqual([]);
    expect(all(docs, 'Role')).toEqual([]);
    expect(one(docs, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('uses the image digest, priority class, replica count, grace period and spread', () => {
    const dep = one(docs, 'Deployment');
    expect(dep.metadata.name).toBe('routability');
    expect(dep.spec.replicas).toBe(3);
    const pod = dep.spec.template.spec;
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.containers[0].image).toBe(
      'registry.example.com/platform/routability-webhook@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
    expect(pod.terminationGracePeriodSeconds).toBe(40);
    expect(pod.containers[0].lifecycle.preStop.sleep.seconds).toBe(10);
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: dep.spec.selector.matchLabels },
      },
    ]);
  });

  it('names, paths, failure policies and timeouts come from values', () => {
    const vwc = one(docs, 'ValidatingWebhookConfiguration');
    const mwc = one(docs, 'MutatingWebhookConfiguration');
    expect(vwc.metadata.name).toBe('routability-validating');
    expect(mwc.metadata.name).toBe('routability-mutating');
    expect(vwc.webhooks[0]).toMatchObject({
      name: 'validate.routability.example.com',
      failurePolicy: 'Ignore',
      timeoutSeconds: 3,
    });
    expect(mwc.webhooks[0]).toMatchObject({ name: 'mutate.routability.example.com', timeoutSeconds: 2 });
    expect(vwc.webhooks[0].clientConfig.service).toEqual({
      name: 'routability',
      namespace: NAMESPACE,
      path: '/v1/validate',
      port: 443,
    });
    expect(mwc.webhooks[0].clientConfig.service.path).toBe('/v1/mutate');
    const cert = new X509Certificate(b64(one(docs, 'Secret').data['tls.crt']));
    expect(cert.subjectAltName).toContain(`DNS:routability.${NAMESPACE}.svc`);
    expect(cert.subjectAltName).toContain(`DNS:routability.${NAMESPACE}.svc.corp.internal`);
  });

  it('adds user exclusions and label requirements to the namespace selector, keeping the fixed ones', () => {
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      expect(one(docs, kind).webhooks[0].namespaceSelector).toEqual({
        matchExpressions: [
          {
            key: 'kubernetes.io/metadata.name',
            operator: 'NotIn',
            values: ['kube-system', NAMESPACE, 'gateway-system'],
          },
          { key: 'routability.example.com/enforce', operator: 'In', values: ['true'] },
        ],
      });
    }
  });
});

describe.skipIf(skipReason !== undefined)('partial overrides', () => {
  it('the release namespace stays excluded even when installed into kube-system', async () => {
    const docs = await render({ namespace: 'kube-system' });
    const values = one(docs, 'ValidatingWebhookConfiguration').webhooks[0].namespaceSelector
      .matchExpressions[0].values;
    expect(values).toEqual(['kube-system']);
  });

  it('service CIDRs alone drop the ServiceCIDR RBAC but keep IPAddress access', async () => {
    const docs = await render({
      setJson: { 'webhook.serviceCIDRs': ['10.96.0.0/12'], 'webhook.audit.interval': '0' },
    });
    expect(one(docs, 'ClusterRole').rules).toEqual([
      { apiGroups: ['networking.k8s.io'], resources: ['ipaddresses'], verbs: ['get'] },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gateways.gateway.networking.k8s.io'],
        verbs: ['list', 'watch'],
      },
    ]);
    expect(one(docs, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(true);
  });

  it('the allocated-IP check off drops IPAddress access', async () => {
    const docs = await render({
      setJson: { 'webhook.checkAllocatedIPs': false, 'webhook.audit.interval': '0' },
    });
    expect(one(docs, 'ClusterRole').rules).toEqual([
      { apiGroups: ['networking.k8s.io'], resources: ['servicecidrs'], verbs: ['list', 'watch'] },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gateways.gateway.networking.k8s.io'],
        verbs: ['list', 'watch'],
      },
    ]);
    expect(container(docs).args).toContain('--no-check-allocated-ips');
  });

  it('the mutating webhook can be turned off', async () => {
    const docs = await render({ setJson: { 'mutatingWebhook.enabled': false } });
    expect(all(docs, 'MutatingWebhookConfiguration')).toEqual([]);
    expect(all(docs, 'ValidatingWebhookConfiguration')).toHaveLength(1);
  });

  it('matchConditions can be turned off for debugging', async () => {
    const docs = await render({ setJson: { 'validatingWebhook.matchConditions': false } });
    expect(one(docs, 'ValidatingWebhookConfiguration').webhooks[0].matchConditions).toBeUndefined();
  });

  it('priorityClassName, PDB and preStop are settable', async () => {
    const docs = await render({
      setJson: {
        priorityClassName: 'high',
        'podDisruptionBudget.enabled': false,
        'lifecycle.preStopSleepSeconds': 0,
      },
    });
    expect(one(docs, 'Deployment').spec.template.spec.priorityClassName).toBe('high');
    expect(all(docs, 'PodDisruptionBudget')).toEqual([]);
    expect(container(docs).lifecycle).toBeUndefined();
  });

  it('hostNetwork: the pods use the node network, on the configured ports; node ports are refused', async () => {
    const docs = await render({
      setJson: { hostNetwork: true, 'webhook.port': 10260, 'webhook.healthPort': 10261 },
    });
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(pod.containers[0].args).toEqual(expect.arrayContaining(['--port=10260', '--health-port=10261']));
    expect(pod.containers[0].ports.map((p: { containerPort: number }) => p.containerPort)).toEqual([
      10260, 10261,
    ]);
    // The Service still answers on 443 and forwards to the named port.
    expect(one(docs, 'Service').spec.ports[0]).toMatchObject({ port: 443, targetPort: 'https' });
    for (const [key, port] of [
      ['webhook.port', 10250],
      ['webhook.healthPort', 10256],
    ] as const) {
      const error = await renderError({ setJson: { hostNetwork: true, [key]: port } });
      expect(error).toContain(`hostNetwork: port ${port} is taken on the node`);
    }
    // Without hostNetwork the same port is the pod's own and allowed.
    const plain = await render({ setJson: { 'webhook.port': 10250 } });
    expect(one(plain, 'Deployment').spec.template.spec.hostNetwork).toBeUndefined();
  });

  it('extraArgs are appended after the chart flags', async () => {
    const docs = await render({ setJson: { 'webhook.extraArgs': ['--some-future-flag=1'] } });
    expect(container(docs).args.at(-1)).toBe('--some-future-flag=1');
  });

  it.each([
    ['the default', {}, ['--max-semi-space-size=2 --max-old-space-size=192']],
    ['another value', { 'webhook.nodeOptions': '--max-old-space-size=96' }, ['--max-old-space-size=96']],
    ['empty: none', { 'webhook.nodeOptions': '' }, []],
    [
      'extraEnv setting it: that one, once',
      { 'webhook.extraEnv': [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=64' }] },
      ['--max-old-space-size=64'],
    ],
  ])('NODE_OPTIONS from webhook.nodeOptions: %s', async (_what, setJson, expected) => {
    const docs = await render({ setJson });
    const env = container(docs).env as Array<{ name: string; value?: string }>;
    expect(env.filter((e) => e.name === 'NODE_OPTIONS').map((e) => e.value)).toEqual(expected);
  });
});

describe.skipIf(skipReason !== undefined)('opt-in extras (ci/extras-values.yaml)', () => {
  let docs: K8sObject[];
  beforeAll(async () => {
    docs = await render({ valuesFiles: ['extras-values.yaml'] });
  });

  it('are all off by default', async () => {
    const defaults = await render();
    // The NetworkPolicy is on by default (admitting any source on the webhook port).
    for (const kind of ['ServiceMonitor', 'PrometheusRule', 'ConfigMap', 'Job']) {
      expect(all(defaults, kind), kind).toEqual([]);
    }
  });

  it('ServiceMonitor scrapes /metrics on the Service metrics port', () => {
    const sm = one(docs, 'ServiceMonitor');
    expect(sm.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(sm.metadata.labels?.release).toBe('kube-prometheus-stack');
    expect(sm.spec.selector.matchLabels).toEqual(one(docs, 'Deployment').spec.selector.matchLabels);
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
    expect(sm.spec.endpoints).toEqual([
      { port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s' },
    ]);
    const metricsPort = one(docs, 'Service').spec.ports.find((p: { name: string }) => p.name === 'metrics');
    expect(metricsPort).toMatchObject({ port: 8080, targetPort: 'health' });
  });

  it('PrometheusRule alerts on certificate expiry within 14 days, error rate and deny rate', () => {
    const rule = one(docs, 'PrometheusRule');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    const rules: Array<{ alert: string; expr: string; for: string; labels: { severity: string } }> =
      rule.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules);
    const byName = new Map(rules.map((r) => [r.alert, r]));
    expect([...byName.keys()].sort()).toEqual(
      [
        'RoutabilityAuditViolations',
        'RoutabilityWebhookCertificateExpiringSoon',
        'RoutabilityWebhookDown',
        'RoutabilityWebhookErrors',
        'RoutabilityWebhookHighDenyRate',
      ].sort(),
    );
    const sel = `namespace="${NAMESPACE}", job="${FULLNAME}"`;
    const cert = byName.get('RoutabilityWebhookCertificateExpiringSoon');
    expect(cert?.expr).toContain(`routability_webhook_certificate_expiry_timestamp_seconds{${sel}}`);
    expect(cert?.expr).toMatch(/- time\(\) < 14 \* 86400/);
    expect(byName.get('RoutabilityAuditViolations')?.expr).toBe(
      `max(routability_webhook_audit_violating_gateways{${sel}}) > 0`,
    );
    const errors = byName.get('RoutabilityWebhookErrors');
    expect(errors?.expr).toContain(`routability_webhook_requests_total{${sel}, outcome="error"}`);
    expect(errors?.expr).toMatch(/> 0\.05$/);
    const deny = byName.get('RoutabilityWebhookHighDenyRate');
    expect(deny?.expr).toContain(`routability_webhook_requests_total{${sel}, outcome="denied"}`);
    expect(deny?.expr).toMatch(/> 0\.5$/);
    for (const r of rules) {
      expect(r.for).toMatch(/^\d+[mh]$/);
      expect(r.labels.severity).toMatch(/^(critical|warning|info)$/);
      // Balanced braces and parentheses: a cheap guard against template slips in PromQL.
      for (const [open, close] of [
        ['{', '}'],
        ['(', ')'],
        ['[', ']'],
      ] as const) {
        expect(r.expr.split(open).length, `${r.alert} ${open}${close}`).toBe(r.expr.split(close).length);
      }
    }
  });

  it('PrometheusRule thresholds come from values', async () => {
    const other = await render({
      setJson: {
        'metrics.prometheusRule.enabled': true,
        'metrics.prometheusRule.certificateExpiryDays': 30,
        'metrics.prometheusRule.errorRateThreshold': 0.01,
      },
    });
    const text = JSON.stringify(one(other, 'PrometheusRule').spec);
    expect(text).toContain('< 30 * 86400');
    expect(text).toContain('> 0.01');
  });

  it('Grafana dashboard ConfigMap holds valid JSON that queries the webhook metrics', () => {
    const cm = one(docs, 'ConfigMap', `${FULLNAME}-dashboard`);
    expect(cm.metadata.namespace).toBe('monitoring');
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    const dashboard = JSON.parse(cm.data['gateway-routability-webhook.json']);
    expect(dashboard.uid).toBe('gateway-routability-webhook');
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) =>
      p.targets.map((t) => t.expr),
    );
    for (const metric of [
      'routability_webhook_requests_total',
      'routability_webhook_request_duration_seconds_bucket',
      'routability_webhook_inflight_requests',
      'routability_webhook_violations_total',
      'routability_webhook_certificate_expiry_timestamp_seconds',
      'routability_webhook_service_ranges',
    ]) {
      expect(
        exprs.some((e) => e.includes(metric)),
        metric,
      ).toBe(true);
    }
  });

  it('NetworkPolicy admits the webhook port and restricts metrics and egress', () => {
    const np = one(docs, 'NetworkPolicy');
    expect(np.spec.podSelector.matchLabels).toEqual(one(docs, 'Deployment').spec.selector.matchLabels);
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const [webhook, metrics] = np.spec.ingress;
    expect(webhook).toEqual({ ports: [{ port: 8443, protocol: 'TCP' }] }); // from anywhere: the apiserver
    expect(metrics.ports).toEqual([{ port: 8080, protocol: 'TCP' }]);
    expect(metrics.from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    expect(np.spec.egress[0].ports.map((p: { port: number }) => p.port)).toEqual([53, 53]);
    expect(np.spec.egress[1].ports).toEqual([{ port: 6443, protocol: 'TCP' }]);
  });

  describe('CRD patch hook', () => {
    const hook = (o: K8sObject) => o.metadata.annotations?.['helm.sh/hook'];

    it('runs routability-webhook crd-patch --patch-cluster after install and upgrade', () => {
      const job = one(docs, 'Job');
      expect(hook(job)).toBe('post-install,post-upgrade');
      expect(job.metadata.annotations?.['helm.sh/hook-delete-policy']).toContain('before-hook-creation');
      const pod = job.spec.template.spec;
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.containers[0].args).toEqual(['crd-patch', '--patch-cluster', '--gep-revision=provisional']);
      expect(pod.containers[0].image).toBe(container(docs).image);
      expect(pod.containers[0].securityContext).toEqual(container(docs).securityContext);
      expect(pod.automountServiceAccountToken).toBe(true);
      expect(job.spec.backoffLimit).toBeGreaterThan(0);
      expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    });

    it('has its own minimal RBAC: get/patch on the Gateway CRD only, created before the Job', () => {
      const job = one(docs, 'Job');
      const sa = one(docs, 'ServiceAccount', job.spec.template.spec.serviceAccountName);
      const role = one(docs, 'ClusterRole', `${FULLNAME}-crd-patch`);
      expect(role.rules).toEqual([
        {
          apiGroups: ['apiextensions.k8s.io'],
          resources: ['customresourcedefinitions'],
          resourceNames: ['gateways.gateway.networking.k8s.io'],
          verbs: ['get', 'patch'],
        },
      ]);
      const binding = one(docs, 'ClusterRoleBinding', `${FULLNAME}-crd-patch`);
      expect(binding.roleRef.name).toBe(role.metadata.name);
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: sa.metadata.name, namespace: NAMESPACE },
      ]);
      const weight = (o: K8sObject) => Number(o.metadata.annotations?.['helm.sh/hook-weight']);
      for (const prerequisite of [sa, role, binding]) {
        expect(hook(prerequisite)).toBe(hook(job));
        expect(weight(prerequisite)).toBeLessThan(weight(job));
      }
      // The webhook's own role is untouched by the hook: it only reads.
      expect(
        one(docs, 'ClusterRole', FULLNAME).rules.every((r: { verbs: string[] }) =>
          r.verbs.every((v) => ['get', 'list', 'watch'].includes(v)),
        ),
      ).toBe(true);
    });
  });
});
