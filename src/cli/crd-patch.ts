/**
 * `routability-webhook crd-patch`: prints the RFC 6902 patch that adds
 * `routability` to the Gateway CRD, in the schema of one GEP-5093 revision
 * (`--gep-revision`); `--apply FILE` prints a CRD patched; `--patch-cluster`
 * patches the live CRD (the Helm chart's hook Job). A CRD that already
 * declares routability is never changed: the command says which revision it
 * carries.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { commandHelp, HELP_FLAG, type FlagDefinitions, type HelpText } from '../config/flags.js';
import {
  GATEWAY_CRD_NAME,
  GATEWAY_CRD_VERSIONS,
  gatewayCrdProblems,
  patchGatewayCrd,
  routabilityPatch,
} from '../crd/patch.js';
import { foundRevisionNote, revisionOfGatewayCrd } from '../crd/gep-revision.js';
import { excessiveAliasing } from '../check/documents.js';
import type { KubeClient } from '../kube/client.js';
import type { GepRevision } from '../rules/index.js';
import { errorMessage, firstLine } from '../error-text.js';
import { EXIT_OK, readAll, writeLine, type CommandIO } from '../io.js';
import { defineCommand, type CommandRun } from './command.js';

export const CRD_PATCH_FLAGS = {
  'gep-revision': {
    kind: 'string',
    choices: ['provisional', 'experimental'],
    default: 'provisional',
    // Command line only: a serve setting such as ROUTABILITY_WEBHOOK_GEP_REVISION=auto must never
    // decide which schema is written into a CRD.
    noEnv: true,
    description:
      'Which schema to add: provisional (this project\'s pattern: External, Cluster, prefixed) or experimental (upstream\'s: "", Cluster, prefixed; CEL rule).',
  },
  apply: {
    kind: 'string',
    noEnv: true,
    description: 'Read a CRD (YAML or JSON; - for stdin) and print it patched, as YAML.',
  },
  'patch-cluster': {
    kind: 'boolean',
    noEnv: true,
    description: `Apply the patch to the live ${GATEWAY_CRD_NAME} (idempotent; needs get and patch on it).`,
  },
  kubeconfig: {
    kind: 'string',
    description: 'With --patch-cluster: kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config).',
  },
  help: HELP_FLAG,
} as const satisfies FlagDefinitions;

const CRD_PATCH_HELP: HelpText = {
  usage: '[--gep-revision provisional|experimental] [--apply FILE | --patch-cluster [--kubeconfig FILE]]',
  description: [
    `Adds the GEP-5093 routability field to spec.addresses[] and status.addresses[] of every served`,
    `version (v1, v1beta1) of ${GATEWAY_CRD_NAME}: type string, maxLength 253, and either the`,
    `provisional pattern (default) or upstream's experimental CEL rule (--gep-revision experimental).`,
    'A CRD that already declares routability is left unchanged; the command says which revision it carries.',
    'With no flag, prints the RFC 6902 JSON patch, which kubectl applies:',
  ],
  examples: [
    'routability-webhook crd-patch > patch.json',
    `kubectl patch crd ${GATEWAY_CRD_NAME} --type json --patch-file patch.json`,
  ],
  notes: ['Exit codes: 0 done, 2 usage error, unreadable or unexpected input, or a failed cluster call.'],
  valueNames: { apply: 'FILE', 'gep-revision': 'REV', kubeconfig: 'PATH' },
};

async function readCrd(file: string, io: CommandIO): Promise<unknown> {
  const text =
    file === '-' ? (await readAll(io.stdin)).toString('utf8') : await readFile(resolve(io.cwd, file), 'utf8');
  const docs = YAML.parseAllDocuments(text).filter((d) => d.contents !== null);
  if (docs.length !== 1)
    throw new Error(
      `${file}: expected exactly one document (the ${GATEWAY_CRD_NAME} CRD), found ${docs.length}`,
    );
  const doc = docs[0]!;
  if (doc.errors.length > 0) throw new Error(`${file}: not valid YAML or JSON: ${firstLine(doc.errors[0]!)}`);
  // Counted before toJS expands anything, with the same bounds as `check`.
  const bomb = excessiveAliasing(doc.contents);
  if (bomb) throw new Error(`${file}: not valid YAML or JSON: ${bomb}`);
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

export const command = defineCommand({
  name: 'crd-patch',
  summary: 'print (or apply) the JSON patch that adds routability to the Gateway CRD',
  flags: CRD_PATCH_FLAGS,
  help: CRD_PATCH_HELP,
  usageHint: () => `\n\n${commandHelp('crd-patch', CRD_PATCH_FLAGS, CRD_PATCH_HELP)}`,
  options: (flags) => ({ ok: true, value: flags }),
  run: async (flags, run) => {
    const { io, fail } = run;
    const apply = flags.apply;
    const patchCluster = flags['patch-cluster'] === true;
    const revision = flags['gep-revision'];
    if (apply !== undefined && patchCluster) return fail('--apply and --patch-cluster cannot be combined');

    if (patchCluster) return patchLiveCrd(run, flags.kubeconfig, revision);

    if (apply === undefined) {
      writeLine(io.stdout, JSON.stringify(routabilityPatch(revision), null, 2));
      return EXIT_OK;
    }

    let crd: unknown;
    try {
      crd = await readCrd(apply, io);
    } catch (err) {
      return fail(errorMessage(err));
    }
    const source = apply === '-' ? 'stdin' : apply;
    const result = patchGatewayCrd(crd, revision);
    if (!result.ok) return fail(`${source}: ${result.problems.join('; ')}`);
    io.stdout.write(YAML.stringify(result.crd, { lineWidth: 0 }));
    // stdout stays the CRD alone (it is piped to kubectl); a CRD left as it was is said on stderr.
    if (!result.changed) writeLine(io.stderr, `${source}: ${foundRevisionNote(result.found, revision)}`);
    return EXIT_OK;
  },
});

export const runCrdPatch = command.main;

async function patchLiveCrd(
  run: CommandRun,
  kubeconfig: string | undefined,
  revision: GepRevision,
): Promise<number> {
  // Loaded only here, so printing a patch never pays for the Kubernetes client.
  const [{ loadKubeconfig }, { kubeClient }] = await Promise.all([
    import('../kube/kubeconfig.js'),
    import('../kube/client.js'),
  ]);
  let loaded;
  try {
    loaded = loadKubeconfig({ kubeconfig, env: run.io.env });
  } catch (err) {
    return run.fail(`--patch-cluster: ${errorMessage(err)}`);
  }
  const client = kubeClient(loaded.kc);
  try {
    return await readAndPatch(run, client, revision);
  } finally {
    client.close();
  }
}

/** Reads the CRD in the wire form, and patches it when its address lists lack the routability field. */
async function readAndPatch(
  { io, fail }: CommandRun,
  client: KubeClient,
  revision: GepRevision,
): Promise<number> {
  const { describeKubeError } = await import('../kube/errors.js');
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GATEWAY_CRD_NAME}`;
  let plain: unknown;
  try {
    // The wire form: typed models rename x-kubernetes-validations, which the revision is read from.
    plain = await client.json({ path, timeoutMs: 15_000 });
  } catch (err) {
    return fail(`cannot read crd/${GATEWAY_CRD_NAME} from ${client.server}: ${describeKubeError(err)}`);
  }
  const problems = gatewayCrdProblems(plain);
  if (problems.length > 0) return fail(`crd/${GATEWAY_CRD_NAME} on ${client.server}: ${problems.join('; ')}`);
  const where = `spec.addresses and status.addresses of ${GATEWAY_CRD_VERSIONS.join(', ')}`;
  const found = revisionOfGatewayCrd(plain);
  if (found.kind !== 'field-missing') {
    writeLine(io.stdout, `crd/${GATEWAY_CRD_NAME} ${foundRevisionNote(found, revision)} (${client.server})`);
    return EXIT_OK;
  }
  try {
    await client.json({
      method: 'PATCH',
      path,
      query: { fieldManager: 'routability-webhook' },
      body: routabilityPatch(revision),
      contentType: 'application/json-patch+json',
      timeoutMs: 15_000,
    });
  } catch (err) {
    return fail(`cannot patch crd/${GATEWAY_CRD_NAME} on ${client.server}: ${describeKubeError(err)}`);
  }
  writeLine(
    io.stdout,
    `crd/${GATEWAY_CRD_NAME} patched: added routability to ${where}, ${revision} revision (${client.server})`,
  );
  return EXIT_OK;
}
