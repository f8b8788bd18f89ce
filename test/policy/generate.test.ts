/**
 * The generated objects: which policy a rule lands in under each setting,
 * schema validity (kubernetes-models), the catalogue's messages, the CEL
 * rules the API server's type checker imposes (homogeneous literals, no
 * optionals), the worst-case cost, and the `policy` command (print, bad
 * flags, --apply against the fake API server).
 */
import type { IncomingMessage } from 'node:http';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { ConfigMap } from 'kubernetes-models/v1';
import * as AdmissionV1K133 from 'kubernetes-models-1.33/admissionregistration.k8s.io/v1';
import { ConfigMap as ConfigMapK133 } from 'kubernetes-models-1.33/v1';
import YAML from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPolicy } from '../../src/cli/policy.js';
import { generatePolicies, paramsConfigMap, type PolicySettings } from '../../src/policy/index.js';
import { validateGateway } from '../../src/rules/index.js';
import { runCli } from '../crd/run-cli.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { baseGateway, context, create, DUAL_STACK, ranges, statusUpdate } from '../kit/gateways.js';
import { estimateCost, PER_EXPRESSION_LIMIT, PER_BINDING_LIMIT } from '../kit/cel-cost.js';
import { BASE_POLICY_SETTINGS, evaluatePolicy } from '../kit/policy-eval.js';

const BASE = BASE_POLICY_SETTINGS;

const ALL_SETTINGS: PolicySettings[] = (['provisional', 'experimental'] as const).flatMap((revision) =>
  (['enforce', 'warn'] as const).flatMap((specPolicy) =>
    (['enforce', 'warn'] as const).map((statusPolicy) => ({ ...BASE, revision, specPolicy, statusPolicy })),
  ),
);

type Spec = {
  variables: { name: string; expression: string }[];
  validations: { expression: string; messageExpression: string; message: string }[];
};
const specOf = (p: Record<string, unknown>) => (p as { spec: Spec }).spec;
const expressionsOf = (p: Record<string, unknown>) => {
  const s = specOf(p);
  return [
    ...s.variables.map((v) => v.expression),
    ...s.validations.flatMap((v) => [v.expression, v.messageExpression]),
  ];
};

describe('policies and bindings by setting', () => {
  it('enforce -> Deny, warn -> Warn + Audit; invalid values deny wherever a list is enforced', () => {
    const specWarn = generatePolicies({ ...BASE, specPolicy: 'warn', statusPolicy: 'enforce' });
    const deny = specWarn.find((g) => g.action === 'deny')!;
    const warn = specWarn.find((g) => g.action === 'warn')!;
    expect(deny.rules.filter((r) => r.list === 'spec').map((r) => r.code)).toEqual([
      'RoutabilityUnsupported',
    ]);
    expect(warn.rules.every((r) => r.list === 'spec')).toBe(true);
    expect((deny.binding as { spec: { validationActions: string[] } }).spec.validationActions).toEqual([
      'Deny',
    ]);
    expect((warn.binding as { spec: { validationActions: string[] } }).spec.validationActions).toEqual([
      'Warn',
      'Audit',
    ]);
    const enforceBoth = generatePolicies({ ...BASE, statusPolicy: 'enforce' });
    expect(enforceBoth.map((g) => g.action)).toEqual(['deny']);
  });

  it('warn on both lists: one Warn + Audit policy, no -deny policy or binding (nothing is refused)', () => {
    const warnBoth = generatePolicies({ ...BASE, specPolicy: 'warn', statusPolicy: 'warn' });
    expect(warnBoth.map((g) => g.action)).toEqual(['warn']);
    expect(warnBoth[0]!.rules.map((r) => r.code)).toContain('RoutabilityUnsupported');
  });

  it('the experimental revision has no External rules; the allow-list only when given', () => {
    const codes = (s: PolicySettings) => generatePolicies(s).flatMap((g) => g.rules.map((r) => r.code));
    expect(codes({ ...BASE, revision: 'experimental' })).not.toContain('ExternalAddressInsideServiceRange');
    expect(codes(BASE)).toContain('ExternalHostnameInClusterDomain');
    expect(codes(BASE)).toContain('RoutabilityNotAllowed');
    expect(codes({ ...BASE, allowedRoutability: undefined })).not.toContain('RoutabilityNotAllowed');
  });

  it('a binding names its policy and the params ConfigMap, skipped (refusing nothing) without it', () => {
    for (const g of generatePolicies(BASE)) {
      const spec = (g.binding as { spec: Record<string, unknown> }).spec;
      expect(spec['policyName']).toBe((g.policy as { metadata: { name: string } }).metadata.name);
      expect(spec['paramRef']).toEqual({
        name: 'gateway-routability-params',
        namespace: 'gateway-routability-webhook',
        parameterNotFoundAction: 'Allow',
      });
      // What the API server cannot evaluate (params not yet synced after a restart) admits.
      expect((g.policy as { spec: { failurePolicy: string } }).spec.failurePolicy).toBe('Ignore');
    }
  });
});

/** An object's schema check: throws when the object does not validate. */
type Check = (object: unknown) => void;
/**
 * The Kubernetes OpenAPI schemas available offline, by the release they come from: kubernetes-models
 * 5.1.0 carries resource.k8s.io/v1 (GA in 1.34), 4.5.1 networking.k8s.io/v1 ServiceCIDR and IPAddress
 * but no resource.k8s.io (1.33). No package with the schemas of 1.31 or 1.32 was found (docs/policy.md).
 */
const SCHEMAS: readonly (readonly [string, { policy: Check; binding: Check; configMap: Check }])[] = [
  [
    'Kubernetes 1.34+ (kubernetes-models 5.1.0)',
    {
      policy: (o) => new ValidatingAdmissionPolicy(o as never).validate(),
      binding: (o) => new ValidatingAdmissionPolicyBinding(o as never).validate(),
      configMap: (o) => new ConfigMap(o as never).validate(),
    },
  ],
  [
    'Kubernetes 1.33 (kubernetes-models 4.5.1)',
    {
      policy: (o) => new AdmissionV1K133.ValidatingAdmissionPolicy(o as never).validate(),
      binding: (o) => new AdmissionV1K133.ValidatingAdmissionPolicyBinding(o as never).validate(),
      configMap: (o) => new ConfigMapK133(o as never).validate(),
    },
  ],
];

describe.each(SCHEMAS)('schema-valid output: %s', (_release, check) => {
  it.each(
    ALL_SETTINGS.map((s) => [`${s.revision} spec ${s.specPolicy} status ${s.statusPolicy}`, s] as const),
  )('%s', (_name, settings) => {
    for (const g of generatePolicies(settings)) {
      expect(() => check.policy(g.policy)).not.toThrow();
      expect(() => check.binding(g.binding)).not.toThrow();
    }
    expect(() => check.configMap(paramsConfigMap(DUAL_STACK))).not.toThrow();
  });

  it('the validator would notice a broken object', () => {
    const [g] = generatePolicies(BASE);
    const broken = structuredClone(g!.policy) as { spec: { failurePolicy: unknown } };
    broken.spec.failurePolicy = 7;
    expect(() => check.policy(broken)).toThrow();
    const binding = structuredClone(g!.binding) as { spec: { validationActions: unknown } };
    binding.spec.validationActions = 'Deny';
    expect(() => check.binding(binding)).toThrow();
  });
});

describe('CEL the API server accepts', () => {
  it('no optional syntax, no mixed-type list literals, names the API server allows', () => {
    for (const s of ALL_SETTINGS)
      for (const g of generatePolicies(s)) {
        for (const e of expressionsOf(g.policy)) {
          expect(e).not.toMatch(/\.\?|optional\./);
          // List literals of the policy hold only ints or only strings.
          for (const m of e.matchAll(/\[([^\][]*)\]/g)) {
            const items = m[1]!.split(',').map((x) => x.trim());
            if (items.length < 2 || !items.every((x) => /^(\d+|'[^']*')$/.test(x))) continue;
            expect(new Set(items.map((x) => x.startsWith("'"))).size, e).toBe(1);
          }
        }
        for (const v of specOf(g.policy).variables) expect(v.name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
      }
  });

  it('every variable is defined once, and before any expression of the policy reads it', () => {
    for (const s of ALL_SETTINGS)
      for (const g of generatePolicies(s)) {
        const { variables, validations } = specOf(g.policy);
        const defined = new Set<string>();
        const reads = (e: string) => [...e.matchAll(/variables\.([A-Za-z_]\w*)/g)].map((m) => m[1]!);
        for (const v of variables) {
          for (const name of reads(v.expression))
            expect(defined.has(name), `${v.name} reads ${name}`).toBe(true);
          expect(defined.has(v.name), v.name).toBe(false);
          defined.add(v.name);
        }
        for (const v of validations)
          for (const name of reads(`${v.expression} ${v.messageExpression}`))
            expect(defined.has(name), name).toBe(true);
      }
  });

  it('worst case (16 addresses on both sides, 4 ranges) stays far inside the per-expression and per-binding budgets', () => {
    for (const s of ALL_SETTINGS)
      for (const g of generatePolicies(s)) {
        const costs = expressionsOf(g.policy).map((e) => estimateCost(e));
        expect(Math.max(...costs)).toBeLessThan(PER_EXPRESSION_LIMIT / 10);
        expect(costs.reduce((a, b) => a + b, 0)).toBeLessThan(PER_BINDING_LIMIT / 10);
      }
  });
});

describe("messages in the catalogue's words", () => {
  it.each([
    ['Cluster outside the range', [{ value: '10.0.0.5', routability: 'Cluster' }]],
    ['External inside the range', [{ value: '10.96.0.7', routability: 'External' }]],
    ['a value the revision does not know', [{ value: '10.96.0.7', routability: 'Clusterx' }]],
    ['a reserved address', [{ value: '10.96.0.0', routability: 'Cluster' }]],
  ])('%s: the policy says what the engine says', (_name, spec) => {
    const request = create(baseGateway({ spec: [{ value: '203.0.113.1' }, ...spec] }));
    const ctx = context({ ranges: ranges('10.96.0.0/12') });
    const engine = validateGateway(request, ctx).violations[0]!;
    const [deny] = generatePolicies({ ...BASE, allowedRoutability: undefined });
    const verdict = evaluatePolicy(deny!, request, paramsConfigMap(ctx.ranges));
    expect(verdict.failures.map((f) => f.message)).toEqual([engine.message]);
  });

  it('status under warn: a warning naming field and value', () => {
    const request = statusUpdate(baseGateway({ status: [{ value: '10.96.0.9' }] }));
    const [, warn] = generatePolicies(BASE);
    const verdict = evaluatePolicy(warn!, request, paramsConfigMap(DUAL_STACK));
    expect(verdict.failures.map((f) => f.message)).toEqual([
      'status.addresses[0].value: Invalid value: "10.96.0.9": routability unset (read as External) requires an address outside the service range (10.96.0.0/12); use routability Cluster for a ClusterIP',
    ]);
  });
});

const KINDS_IN_ORDER = [
  'Namespace',
  'ConfigMap',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'ValidatingAdmissionPolicyBinding',
];
const docsOf = (stdout: string) =>
  YAML.parseAllDocuments(stdout).map(
    (d) => d.toJS() as { kind: string; data?: unknown; metadata: { name: string } },
  );

describe('routability-webhook policy', () => {
  it('prints what kubectl apply -f needs on a new cluster, in a safe order, under a comment naming what is out of scope', async () => {
    const out = await runCli(runPolicy, [
      '--gep-revision',
      'provisional',
      '--service-cidr',
      '10.96.0.0/12,fd00:10:96::/112',
    ]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^# Generated by routability-webhook policy/);
    expect(out.stdout).toContain('# Out of scope');
    expect(out.stdout).toContain('ClusterAddressAllocated');
    expect(out.stdout).toContain('--gep-revision provisional as given (not checked against a cluster)');
    const docs = docsOf(out.stdout);
    // The params' Namespace and ConfigMap first, the policies, and the bindings (what puts them in force) last.
    expect(docs.map((d) => d.kind)).toEqual(KINDS_IN_ORDER);
    expect(docs[0]!.metadata.name).toBe('gateway-routability-webhook');
    expect(docs[1]!.data).toEqual({ serviceCIDRs: '10.96.0.0/12,fd00:10:96::/112', terminatingCIDRs: '' });
    expect(docs[2]).toEqual(
      JSON.parse(JSON.stringify(generatePolicies({ ...BASE, allowedRoutability: undefined })[0]!.policy)),
    );
  });

  it('without --service-cidr the params without data (range rules idle); --status-policy enforce gives one policy', async () => {
    const out = await runCli(runPolicy, ['--status-policy', 'enforce', '--gep-revision', 'experimental']);
    const docs = docsOf(out.stdout);
    expect(docs.map((d) => d.kind)).toEqual([
      'Namespace',
      'ConfigMap',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    expect(docs[1]!.data).toBeUndefined();
    expect(out.stdout).toContain('gateway-routability-webhook.io/gep-revision: experimental');
    expect(out.stdout).toContain('the range rules deny nothing until serve');
  });

  it('no Namespace object for a namespace every cluster has', async () => {
    const out = await runCli(runPolicy, [
      '--gep-revision',
      'provisional',
      '--params-namespace',
      'kube-system',
    ]);
    expect(docsOf(out.stdout).map((d) => d.kind)).toEqual(KINDS_IN_ORDER.slice(1));
  });

  it('warn on both lists: no -deny policy or binding in the output', async () => {
    const out = await runCli(runPolicy, [
      '--gep-revision',
      'provisional',
      '--spec-policy',
      'warn',
      '--status-policy',
      'warn',
    ]);
    const names = docsOf(out.stdout).map((d) => `${d.kind}/${d.metadata.name}`);
    expect(names.filter((n) => n.endsWith('-deny'))).toEqual([]);
    expect(names).toContain('ValidatingAdmissionPolicyBinding/gateway-routability-warn');
  });

  it.each([
    [['--gep-revision', 'provisional', '--service-cidr', '10.96.0.1/12'], 'host bits set'],
    [['--gep-revision', 'newest'], 'gep-revision'],
    [['--gep-revision', 'provisional', '--allowed-routability', 'Nope'], 'allowed-routability'],
    [['--gep-revision', 'provisional', '--name', 'Bad_Name'], '--name'],
  ])('%j is a usage error naming the problem', async (argv, problem) => {
    const out = await runCli(runPolicy, argv);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('routability-webhook policy:');
    expect(out.stderr).toContain(problem);
    expect(out.stdout).toBe('');
  });

  it('the default (--gep-revision auto) without a cluster says how to print offline', async () => {
    const out = await runCli(runPolicy, ['--kubeconfig', '/nonexistent/kubeconfig']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--gep-revision auto reads the Gateway CRD');
    expect(out.stderr).toContain('give --gep-revision provisional or experimental');
    expect(out.stdout).toBe('');
  });

  describe('against a cluster (the fake API server)', () => {
    let api: FakeApiServer;
    const applied: { path: string; contentType: string; body: { kind: string } }[] = [];
    /** PATCH paths that answer 500. */
    const failing = new Set<string>();
    beforeAll(async () => {
      api = await FakeApiServer.start();
      api.addRoute((req: IncomingMessage, res, url) => {
        if (req.method !== 'PATCH' || url.pathname.includes('customresourcedefinitions')) return false;
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (failing.has(url.pathname)) {
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ kind: 'Status', status: 'Failure', message: 'etcd is sad', code: 500 }));
            return;
          }
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { kind: string };
          applied.push({
            path: url.pathname + url.search,
            contentType: String(req.headers['content-type']),
            body,
          });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        });
        return true;
      });
    });
    afterAll(() => api.close());
    beforeEach(() => {
      applied.length = 0;
      failing.clear();
      if (api.crds.has(GATEWAY_CRD_NAME)) api.crds.delete(GATEWAY_CRD_NAME);
    });
    const cli = (...argv: string[]) => runCli(runPolicy, ['--kubeconfig', api.kubeconfigPath, ...argv]);
    const annotatedRevision = (stdout: string) =>
      [...stdout.matchAll(/gateway-routability-webhook\.io\/gep-revision: (\w+)/g)].map((m) => m[1]);

    it.each(['provisional', 'experimental'] as const)(
      'auto follows a CRD carrying the %s revision',
      async (revision) => {
        api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd(revision));
        const out = await cli('--service-cidr', '10.96.0.0/12');
        expect(out.code, out.stderr).toBe(0);
        expect(new Set(annotatedRevision(out.stdout))).toEqual(new Set([revision]));
        expect(out.stderr).toContain(`GEP-5093 revision ${revision}: crd/${GATEWAY_CRD_NAME}`);
      },
    );

    it('auto on a CRD without routability, or without Gateway API: provisional, saying so', async () => {
      const none = await cli();
      expect(none.code, none.stderr).toBe(0);
      expect(none.stderr).toContain('not found (Gateway API is not installed)');
      api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('none'));
      const unpatched = await cli();
      expect(unpatched.stderr).toContain('has no routability field');
      expect(new Set(annotatedRevision(unpatched.stdout))).toEqual(new Set(['provisional']));
    });

    it('--apply refuses a fixed revision the CRD does not carry, applying nothing', async () => {
      api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
      const out = await cli('--apply', '--gep-revision', 'experimental');
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('--gep-revision experimental: crd/gateways.gateway.networking.k8s.io on');
      expect(out.stderr).toContain('a experimental policy would refuse Gateways that CRD admits');
      expect(applied).toEqual([]);
    });

    it('--apply server-side applies every object in the printed order', async () => {
      api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
      const out = await cli('--apply', '--service-cidr', '10.96.0.0/12');
      expect(out.code, out.stderr).toBe(0);
      expect(applied.map((a) => a.path.split('?')[0])).toEqual([
        '/api/v1/namespaces/gateway-routability-webhook',
        '/api/v1/namespaces/gateway-routability-webhook/configmaps/gateway-routability-params',
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gateway-routability-deny',
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gateway-routability-warn',
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/gateway-routability-deny',
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/gateway-routability-warn',
      ]);
      expect(applied.every((a) => a.contentType === 'application/apply-patch+yaml')).toBe(true);
      expect(applied[0]!.path).toContain('fieldManager=routability-webhook');
      expect(out.stdout).toContain('ValidatingAdmissionPolicy/gateway-routability-deny applied');
    });

    it('--apply stopped before the bindings: says what it applied, what it left, and that nothing is in force', async () => {
      api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
      failing.add(
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gateway-routability-warn',
      );
      const out = await cli('--apply');
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('cannot apply ValidatingAdmissionPolicy/gateway-routability-warn on');
      expect(out.stderr).toContain(
        'applied: Namespace/gateway-routability-webhook, ConfigMap/gateway-routability-params, ValidatingAdmissionPolicy/gateway-routability-deny',
      );
      expect(out.stderr).toContain(
        'not applied: ValidatingAdmissionPolicy/gateway-routability-warn, ValidatingAdmissionPolicyBinding/gateway-routability-deny, ValidatingAdmissionPolicyBinding/gateway-routability-warn',
      );
      expect(out.stderr).toContain(
        'No binding was applied, so no policy is in force and no write is refused',
      );
    });

    it('--apply stopped between the bindings: names the binding in force and how to remove it', async () => {
      api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
      failing.add(
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/gateway-routability-warn',
      );
      const out = await cli('--apply');
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('In force: ValidatingAdmissionPolicyBinding/gateway-routability-deny');
      expect(out.stderr).toContain(
        'kubectl delete validatingadmissionpolicybinding/gateway-routability-deny',
      );
    });
  });
});
