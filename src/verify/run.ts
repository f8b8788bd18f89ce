/** Runs verify's steps in order; a transport failure (no answer at all) ends the run. */
import type { KubeClient } from '../kube/client.js';
import type { StepResult } from './answer.js';
import { checkBinding, checkStatusPath } from './status-policy.js';
import { checkAdmitted, checkCrd, checkDenied, type VerifySettings } from './steps.js';

export type { StepResult, Outcome } from './answer.js';
export type { VerifySettings } from './steps.js';

/** Each step's result; rejects when the API server gives no answer (unreachable, deadline). */
export async function runVerify(client: KubeClient, s: VerifySettings): Promise<StepResult[]> {
  const results: StepResult[] = [await checkCrd(client, s)];
  if (s.webhookName !== undefined || s.policyBindings.length > 0) {
    results.push(await checkAdmitted(client, s));
    results.push(await checkDenied(client, s));
    results.push(await checkStatusPath(client, s));
  }
  for (const binding of s.policyBindings) results.push(await checkBinding(client, s, binding));
  return results;
}
