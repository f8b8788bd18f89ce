/**
 * The two steps that read what is there: a dry-run status update of a Gateway
 * that exists (the status path has its own rules and webhook calls; a create
 * never reaches it), and the policy bindings with their params.
 */
import { asRecord, own } from '../json/record.js';
import type { KubeClient } from '../kube/client.js';
import {
  dig,
  failed,
  isSuccess,
  ok,
  parsed,
  refusal,
  statusMessage,
  unproven,
  type StepResult,
} from './answer.js';
import { explainCallFailure, isCallFailure, PARAMS_MISSING } from './explain.js';
import { ADMITTED_ADDRESS } from './probes.js';
import type { VerifySettings } from './steps.js';

const GATEWAYS = (ns: string) =>
  `/apis/gateway.networking.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/gateways`;

/** The first stored Gateway of the namespace (none: the step says what it cannot prove), or the step's failure. */
async function someGateway(
  client: KubeClient,
  s: VerifySettings,
): Promise<{ gateway?: Record<string, unknown>; result?: StepResult }> {
  const answer = await client.send({
    path: GATEWAYS(s.namespace),
    query: { limit: '1' },
    timeoutMs: s.timeoutMs,
  });
  const refused = refusal('status', answer, `list on gateways in namespace ${s.namespace}`);
  if (refused) return { result: refused };
  if (!isSuccess(answer))
    return { result: failed('status', `cannot list Gateways in ${s.namespace}: ${statusMessage(answer)}`) };
  const first = asRecord(dig(parsed(answer.text), 'items', 0));
  return first === undefined ? {} : { gateway: { ...first } };
}

export async function checkStatusPath(client: KubeClient, s: VerifySettings): Promise<StepResult> {
  const step = 'status';
  const { gateway, result } = await someGateway(client, s);
  if (result) return result;
  if (gateway === undefined)
    return unproven(
      step,
      `no Gateway in ${s.namespace} to dry-run a status update on (a create never reaches gateways/status): not proven`,
    );
  const name = String(dig(gateway, 'metadata', 'name'));
  const addresses = dig(gateway, 'status', 'addresses');
  const status = { ...(asRecord(own(gateway, 'status')) ?? {}) };
  status['addresses'] = [...(Array.isArray(addresses) ? addresses : []), { ...ADMITTED_ADDRESS }];
  const answer = await client.send({
    method: 'PUT',
    path: `${GATEWAYS(s.namespace)}/${encodeURIComponent(name)}/status`,
    query: { dryRun: 'All', fieldManager: 'routability-webhook-verify' },
    body: { ...gateway, status },
    timeoutMs: s.timeoutMs,
  });
  const message = isSuccess(answer) ? '' : statusMessage(answer);
  if (isSuccess(answer))
    return ok(step, `a dry-run status update of gateway ${s.namespace}/${name} was answered (admitted)`);
  if (isCallFailure(message)) return failed(step, `${message}: ${explainCallFailure(message)}`);
  if (
    s.webhookName !== undefined &&
    message.startsWith(`admission webhook "${s.webhookName}" denied the request`)
  )
    return ok(
      step,
      `a dry-run status update of gateway ${s.namespace}/${name} was answered by ${s.webhookName} (denied under --status-policy enforce)`,
    );
  const refused = refusal(
    step,
    answer,
    `update on gateways/status in namespace ${s.namespace} (sent as dry runs)`,
  );
  if (refused) return refused;
  return unproven(
    step,
    `a dry-run status update of gateway ${s.namespace}/${name} was refused before admission could answer: ${message}`,
  );
}

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** One binding: it exists, its policy exists, and its params ConfigMap has service ranges. */
export async function checkBinding(
  client: KubeClient,
  s: VerifySettings,
  binding: string,
): Promise<StepResult> {
  const step = `policy ${binding}`;
  const get = (path: string) => client.send({ path, timeoutMs: s.timeoutMs });
  const answer = await get(`${ADMISSION}/validatingadmissionpolicybindings/${encodeURIComponent(binding)}`);
  const refused = refusal(
    step,
    answer,
    'get on validatingadmissionpolicybindings, validatingadmissionpolicies and the params ConfigMap',
  );
  if (refused) return refused;
  if (answer.status === 404)
    return failed(
      step,
      `validatingadmissionpolicybinding ${binding} not found: Gateways are not checked by it`,
    );
  if (!isSuccess(answer))
    return failed(step, `cannot read validatingadmissionpolicybinding ${binding}: ${statusMessage(answer)}`);
  const spec = dig(parsed(answer.text), 'spec');
  const policy = dig(spec, 'policyName');
  const paramName = dig(spec, 'paramRef', 'name');
  const paramNamespace = dig(spec, 'paramRef', 'namespace');
  if (typeof policy !== 'string') return failed(step, `binding ${binding} names no policy (spec.policyName)`);
  const policyAnswer = await get(`${ADMISSION}/validatingadmissionpolicies/${encodeURIComponent(policy)}`);
  if (policyAnswer.status === 404)
    return failed(step, `binding ${binding} binds validatingadmissionpolicy ${policy}, which does not exist`);
  if (!isSuccess(policyAnswer))
    return failed(step, `cannot read validatingadmissionpolicy ${policy}: ${statusMessage(policyAnswer)}`);
  if (typeof paramName !== 'string' || typeof paramNamespace !== 'string')
    return failed(
      step,
      `binding ${binding} has no spec.paramRef name and namespace: the policy has no service ranges`,
    );
  const where = `configmap ${paramNamespace}/${paramName}`;
  const params = await get(
    `/api/v1/namespaces/${encodeURIComponent(paramNamespace)}/configmaps/${encodeURIComponent(paramName)}`,
  );
  if (params.status === 404)
    return failed(step, `the params ${where} of binding ${binding} do not exist: ${PARAMS_MISSING}`);
  if (!isSuccess(params)) return failed(step, `cannot read the params ${where}: ${statusMessage(params)}`);
  const cidrs = dig(parsed(params.text), 'data', 'serviceCIDRs');
  if (typeof cidrs !== 'string' || cidrs.trim() === '')
    return failed(step, `the params ${where} of binding ${binding} have no serviceCIDRs: ${PARAMS_MISSING}`);
  return ok(step, `binding ${binding} binds ${policy} with params ${where} (serviceCIDRs ${cidrs})`);
}
