// The webhook container as the chart renders it, turned into `podman run` flags: the same
// arguments, user, groups, read-only root, dropped capabilities, writable /tmp, TLS mount and
// memory limit. Rendered with the real helm (scripts/ensure-helm.mjs) from the tree under test.
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureHelm } from '../ensure-helm.mjs';
import { run } from './podman.mjs';

export const RELEASE = 'rw';
export const NAMESPACE = 'gateway-routability';

// No apiserver here: the chart's own setting for clusters without ServiceCIDR objects (the fixture
// goldens' dual-stack ranges) and no allocated-IP lookup, so the pod needs no cluster access.
export const VALUES = [
  ['--set-json', 'webhook.serviceCIDRs=["10.96.0.0/12","fd00:10:96::/112"]'],
  ['--set', 'webhook.checkAllocatedIPs=false'],
];

/** Kubernetes quantity (e.g. 256Mi, 1G, 16Mi) in bytes. */
export function quantityBytes(q) {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  if (!m) throw new Error(`cannot read quantity ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Math.round(Number(m[1]) * (m[2] ? unit[m[2]] : 1));
}

/** Renders the chart in `treeDir` and returns the Deployment's pod template spec. */
export async function renderPod(treeDir) {
  const helm = ensureHelm();
  const chart = join(treeDir, 'charts', 'gateway-routability-webhook');
  const r = await run(helm, ['template', RELEASE, chart, '--namespace', NAMESPACE, ...VALUES.flat()], {
    timeoutMs: 120_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', KUBECONFIG: '/dev/null' },
  });
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr.trim()}`);
  const deployments = parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .filter((o) => o?.kind === 'Deployment');
  if (deployments.length !== 1) throw new Error(`expected one Deployment, rendered ${deployments.length}`);
  return deployments[0].spec.template.spec;
}

/**
 * Reads what `podman run` must reproduce from the pod spec. Throws on anything the image test
 * cannot mirror, so a chart change that matters here is noticed rather than ignored.
 */
export function podRunPlan(pod) {
  const container = pod.containers.find((c) => c.name === 'webhook');
  if (!container) throw new Error('no container named webhook');
  const sc = container.securityContext ?? {};
  const psc = pod.securityContext ?? {};
  const uid = sc.runAsUser ?? psc.runAsUser;
  const gid = sc.runAsGroup ?? psc.runAsGroup;
  if (uid === undefined || gid === undefined) throw new Error('the chart sets no runAsUser/runAsGroup');
  const port = (name) => container.ports.find((p) => p.name === name)?.containerPort;
  const volumes = new Map(pod.volumes.map((v) => [v.name, v]));
  const mounts = container.volumeMounts.map((m) => ({ ...m, volume: volumes.get(m.name) }));
  const tls = mounts.find((m) => m.volume?.secret);
  if (!tls) throw new Error('no Secret volume mount for TLS');
  const emptyDirs = mounts.filter((m) => m.volume?.emptyDir);
  const memoryLimit = container.resources?.limits?.memory;
  return {
    args: container.args,
    env: container.env ?? [],
    uid,
    gid,
    fsGroup: psc.fsGroup,
    readOnlyRoot: sc.readOnlyRootFilesystem === true,
    dropAll: (sc.capabilities?.drop ?? []).includes('ALL'),
    noNewPrivileges: sc.allowPrivilegeEscalation === false,
    httpsPort: port('https'),
    healthPort: port('health'),
    readinessPath: container.readinessProbe?.httpGet?.path,
    tlsMountPath: tls.mountPath,
    tlsDefaultMode: tls.volume.secret.defaultMode ?? 0o644,
    emptyDirs: emptyDirs.map((m) => ({ path: m.mountPath, sizeLimit: m.volume.emptyDir.sizeLimit })),
    memoryLimitBytes: memoryLimit ? quantityBytes(memoryLimit) : undefined,
    memoryRequestBytes: container.resources?.requests?.memory
      ? quantityBytes(container.resources.requests.memory)
      : undefined,
    graceSeconds: pod.terminationGracePeriodSeconds ?? 30,
    preStopSleepSeconds: container.lifecycle?.preStop?.sleep?.seconds ?? 0,
  };
}

/** `podman run` flags for the plan (the image and the args go after them). */
export function podmanRunFlags(plan, { tlsDir }) {
  const flags = [];
  if (plan.readOnlyRoot) flags.push('--read-only', '--read-only-tmpfs=false');
  flags.push('--user', `${plan.uid}:${plan.gid}`);
  if (plan.fsGroup !== undefined) flags.push('--group-add', String(plan.fsGroup));
  if (plan.dropAll) flags.push('--cap-drop=ALL');
  if (plan.noNewPrivileges) flags.push('--security-opt', 'no-new-privileges');
  for (const dir of plan.emptyDirs) {
    const size = dir.sizeLimit ? `,size=${quantityBytes(dir.sizeLimit)}` : '';
    flags.push('--tmpfs', `${dir.path}:rw,mode=1777,nosuid,nodev${size}`);
  }
  flags.push('-v', `${tlsDir}:${plan.tlsMountPath}:ro`);
  if (plan.memoryLimitBytes) flags.push('--memory', String(plan.memoryLimitBytes));
  for (const e of plan.env) if (e.value !== undefined) flags.push('--env', `${e.name}=${e.value}`);
  flags.push('-p', `127.0.0.1::${plan.httpsPort}`, '-p', `127.0.0.1::${plan.healthPort}`);
  return flags;
}
