/**
 * The objects the API server holds that decide admission: namespaces (with
 * the `kubernetes.io/metadata.name` label the API server sets on every
 * namespace: pkg/apis/core/v1/defaults.go SetDefaults_Namespace, kept in
 * pkg/registry/core/namespace), ConfigMaps (policy params), webhook configurations,
 * ValidatingAdmissionPolicies and bindings, the Gateway CRD, and which
 * backend answers at each Service. `apply` is `kubectl apply` of one object:
 * a namespaced object in a namespace that does not exist is refused by the
 * NamespaceLifecycle admission plugin
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go),
 * so the apply of that object fails and the cluster is left without it.
 */
import type { Labels } from './label-selector.js';
import { isObj, type Backend, type Obj } from './types.js';

/** The namespaces a new cluster has (kubeadm, kind and the managed offerings alike). */
export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** Kinds the model stores; every other kind is accepted by apply and not kept (it does not decide admission). */
const NAMESPACED_KINDS = new Set([
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'Deployment',
  'Role',
  'RoleBinding',
  'PodDisruptionBudget',
  'NetworkPolicy',
  'Job',
  'ServiceMonitor',
  'PrometheusRule',
  'Lease',
  'Certificate',
  'Issuer',
]);

export type ApplyResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

const key = (namespace: string, name: string) => `${namespace}/${name}`;

function metadataOf(object: Obj): { name: string; namespace?: string; labels: Labels } {
  const m = isObj(object['metadata']) ? object['metadata'] : {};
  return {
    name: String(m['name'] ?? ''),
    ...(typeof m['namespace'] === 'string' ? { namespace: m['namespace'] } : {}),
    labels: isObj(m['labels']) ? (m['labels'] as Labels) : {},
  };
}

export class Cluster {
  readonly namespaces = new Map<string, Labels>();
  readonly configMaps = new Map<string, Obj>();
  readonly mutatingWebhooks = new Map<string, Obj>();
  readonly validatingWebhooks = new Map<string, Obj>();
  readonly policies = new Map<string, Obj>();
  readonly bindings = new Map<string, Obj>();
  /** Every other namespaced object applied, by kind/namespace/name (Deployments, Services, …). */
  readonly others = new Map<string, Obj>();
  gatewayCrd: Obj | undefined;
  /** namespace/name of a Service → what answers there. A Service with no entry has no endpoints. */
  readonly backends = new Map<string, Backend>();

  /** A new cluster: only the default namespaces. */
  static fresh(): Cluster {
    const c = new Cluster();
    for (const ns of DEFAULT_NAMESPACES) c.addNamespace(ns);
    return c;
  }

  /** The API server labels every namespace with its own name (kubernetes.io/metadata.name). */
  addNamespace(name: string, labels: Labels = {}): void {
    this.namespaces.set(name, { ...labels, 'kubernetes.io/metadata.name': name });
  }

  setBackend(namespace: string, service: string, backend: Backend): void {
    this.backends.set(key(namespace, service), backend);
  }

  backendOf(namespace: string, service: string): Backend {
    return this.backends.get(key(namespace, service)) ?? { kind: 'no-endpoints' };
  }

  configMap(namespace: string, name: string): Obj | undefined {
    return this.configMaps.get(key(namespace, name));
  }

  /** `kubectl apply` of one object. */
  apply(object: Obj): ApplyResult {
    const kind = String(object['kind'] ?? '');
    const meta = metadataOf(object);
    if (meta.name === '') return { ok: false, error: `${kind}: metadata.name is required` };
    if (NAMESPACED_KINDS.has(kind)) {
      const ns = meta.namespace ?? 'default';
      if (!this.namespaces.has(ns)) return { ok: false, error: `namespaces "${ns}" not found` };
      if (kind === 'ConfigMap') this.configMaps.set(key(ns, meta.name), object);
      else this.others.set(`${kind}/${key(ns, meta.name)}`, object);
      return { ok: true };
    }
    return this.applyClusterScoped(kind, meta.name, meta.labels, object);
  }

  private applyClusterScoped(kind: string, name: string, labels: Labels, object: Obj): ApplyResult {
    const stores: Record<string, Map<string, Obj>> = {
      MutatingWebhookConfiguration: this.mutatingWebhooks,
      ValidatingWebhookConfiguration: this.validatingWebhooks,
      ValidatingAdmissionPolicy: this.policies,
      ValidatingAdmissionPolicyBinding: this.bindings,
    };
    if (kind === 'Namespace') this.addNamespace(name, labels);
    else if (kind === 'CustomResourceDefinition') {
      if (name === 'gateways.gateway.networking.k8s.io') this.gatewayCrd = object;
    } else stores[kind]?.set(name, object);
    return { ok: true };
  }

  /**
   * Applies each object in order. kubectl goes on past a failed object and reports every error at
   * the end (staging/src/k8s.io/kubectl/pkg/cmd/apply/apply.go since Kubernetes 1.18,
   * kubernetes/kubernetes#89539), so the objects after a failed one are applied.
   */
  applyAll(objects: readonly Obj[]): { applied: number; errors: string[] } {
    const errors: string[] = [];
    let applied = 0;
    for (const o of objects) {
      const r = this.apply(o);
      if (r.ok) applied++;
      else errors.push(`${String(o['kind'])} ${metadataOf(o).name}: ${r.error}`);
    }
    return { applied, errors };
  }
}
