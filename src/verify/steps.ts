/**
 * The steps of `verify`, each one request (or two) to the API server and one
 * result line. Probe writes are always server-side dry runs (`dryRun=All`):
 * the API server runs admission and validation and stores nothing.
 */
import { GATEWAY_CRD_NAME } from '../crd/patch.js';
import { describeCrdRevision, revisionOfGatewayCrd } from '../crd/gep-revision.js';
import type { KubeAnswer, KubeClient } from '../kube/client.js';
import { dig, failed, isSuccess, ok, parsed, refusal, statusMessage, type StepResult } from './answer.js';
import { explainCallFailure, isCallFailure, PRUNED } from './explain.js';
import { ADMITTED_ADDRESS, DENIED_ADDRESS, expectedDenial, expectedWarning, probeGateway } from './probes.js';

export interface VerifySettings {
  /** Where the probes are dry-run created: a namespace the webhook selects. */
  readonly namespace: string;
  /** The validating webhook's name; undefined when only policies are installed. */
  readonly webhookName: string | undefined;
  readonly specPolicy: 'enforce' | 'warn';
  readonly policyBindings: readonly string[];
  readonly timeoutMs: number;
}

const GATEWAYS = (ns: string) =>
  `/apis/gateway.networking.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/gateways`;
const DRY_RUN = { dryRun: 'All', fieldManager: 'routability-webhook-verify' };

export async function checkCrd(client: KubeClient, s: VerifySettings): Promise<StepResult> {
  const step = 'crd';
  const answer = await client.send({
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GATEWAY_CRD_NAME}`,
    timeoutMs: s.timeoutMs,
  });
  const refused = refusal(step, answer, `get on customresourcedefinitions/${GATEWAY_CRD_NAME}`);
  if (refused) return refused;
  if (answer.status === 404)
    return failed(step, `crd/${GATEWAY_CRD_NAME} not found: install Gateway API first`);
  if (!isSuccess(answer))
    return failed(step, `cannot read crd/${GATEWAY_CRD_NAME}: ${statusMessage(answer)}`);
  const found = revisionOfGatewayCrd(parsed(answer.text));
  if (found.kind === 'field-missing')
    return failed(
      step,
      `crd/${GATEWAY_CRD_NAME} has no routability field in ${found.versions.join(', ')}: ${PRUNED}`,
    );
  if (found.kind === 'revision' && found.missing.length > 0)
    return failed(
      step,
      `crd/${GATEWAY_CRD_NAME} has no routability in ${found.missing.join(', ')}: ${PRUNED}`,
    );
  return ok(
    step,
    `crd/${GATEWAY_CRD_NAME} carries routability in every served version: ${describeCrdRevision(found)}`,
  );
}

function dryRunCreate(
  client: KubeClient,
  s: VerifySettings,
  name: string,
  address: Readonly<Record<string, string>>,
) {
  return client.send({
    method: 'POST',
    path: GATEWAYS(s.namespace),
    query: DRY_RUN,
    body: probeGateway(s.namespace, name, address),
    timeoutMs: s.timeoutMs,
  });
}

/** A failed create that is about the API server or the credentials, not about the webhook's answer. */
function createProblem(step: string, answer: KubeAnswer, s: VerifySettings): StepResult | undefined {
  const message = statusMessage(answer);
  if (isCallFailure(message)) return failed(step, `${message}: ${explainCallFailure(message)}`);
  if (/denied the request|denied request/.test(message)) return undefined;
  const refused = refusal(step, answer, `create on gateways in namespace ${s.namespace} (sent as dry runs)`);
  if (refused) return refused;
  if (answer.status === 404)
    return failed(
      step,
      `the cluster serves no gateway.networking.k8s.io/v1 Gateways in ${s.namespace} (${message})`,
    );
  return undefined;
}

export async function checkAdmitted(client: KubeClient, s: VerifySettings): Promise<StepResult> {
  const step = 'admitted';
  const answer = await dryRunCreate(client, s, 'routability-verify-admitted', ADMITTED_ADDRESS);
  if (!isSuccess(answer))
    return (
      createProblem(step, answer, s) ??
      failed(step, `a valid Gateway (routability Cluster, a Hostname) was refused: ${statusMessage(answer)}`)
    );
  const kept = dig(parsed(answer.text), 'spec', 'addresses', 0, 'routability');
  if (kept !== ADMITTED_ADDRESS.routability)
    return failed(step, `a dry-run create was admitted but routability was dropped: ${PRUNED}`);
  return ok(
    step,
    `a valid Gateway was admitted in ${s.namespace} (dry run) and kept routability ${String(kept)}`,
  );
}

export async function checkDenied(client: KubeClient, s: VerifySettings): Promise<StepResult> {
  const step = 'denied';
  const who = s.webhookName ?? `a binding of ${s.policyBindings.join(', ')}`;
  const answer = await dryRunCreate(client, s, 'routability-verify-denied', DENIED_ADDRESS);
  if (s.specPolicy === 'warn') return warned(step, answer, s);
  if (isSuccess(answer))
    return failed(
      step,
      `a Gateway ${who} must deny (routability Cluster, ${DENIED_ADDRESS.value}) was admitted in ${s.namespace}: the webhook was not called (no configuration, the namespace not selected, failurePolicy Ignore while unreachable) or runs with --spec-policy warn`,
    );
  const problem = createProblem(step, answer, s);
  if (problem) return problem;
  return judgeDenial(step, statusMessage(answer), s);
}

/** Who denied the probe, and with which text: this webhook (or, without one, a binding of ours) and the catalogue's. */
function judgeDenial(step: string, message: string, s: VerifySettings): StepResult {
  if (s.webhookName === undefined) {
    const by = s.policyBindings.find((b) => message.includes(`with binding '${b}' denied request: `));
    if (by === undefined)
      return failed(step, `denied, but not by a binding of ${s.policyBindings.join(', ')}: "${message}"`);
    const rule = expectedDenial('').replace(/^.*?denied the request: /, '');
    if (message.includes(rule)) return ok(step, `denied by binding ${by} with the documented message`);
    return failed(step, `denied by binding ${by} with another message: "${message}", expected "${rule}…"`);
  }
  const name = s.webhookName;
  const expected = expectedDenial(name);
  if (message.startsWith(expected)) return ok(step, `denied by ${name} with the documented message`);
  if (message.startsWith(`admission webhook "${name}" denied the request`))
    return failed(step, `denied by ${name} with another message: "${message}", expected "${expected}…"`);
  return failed(
    step,
    `denied, but not by ${name}: "${message}" (another webhook or policy answered; is ${name} the configured validatingWebhook.name?)`,
  );
}

function warned(step: string, answer: KubeAnswer, s: VerifySettings): StepResult {
  if (!isSuccess(answer))
    return (
      createProblem(step, answer, s) ??
      failed(step, `refused under --spec-policy warn: ${statusMessage(answer)}`)
    );
  const expected = expectedWarning();
  if ((answer.warnings ?? []).includes(expected))
    return ok(step, `admitted with the documented warning (--spec-policy warn)`);
  return failed(
    step,
    `admitted without the warning "${expected}": the webhook was not called (no configuration, the namespace not selected, failurePolicy Ignore while unreachable)`,
  );
}
