/** Reading the API server's answers: the Status message of a refusal, the object of a success. */
import { asRecord, own } from '../json/record.js';
import type { KubeAnswer } from '../kube/client.js';

export type Outcome = 'ok' | 'failed' | 'unproven';

/** One line of verify's report. */
export interface StepResult {
  readonly step: string;
  readonly outcome: Outcome;
  readonly text: string;
}

export function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The `message` of a Status answer, or the start of the text when it is not one. */
export function statusMessage(answer: KubeAnswer): string {
  const message = own(asRecord(parsed(answer.text)), 'message');
  if (typeof message === 'string' && message !== '') return message;
  const text = answer.text.trim().replace(/\s+/g, ' ');
  return text === '' ? `HTTP ${answer.status}` : `HTTP ${answer.status}: ${text.slice(0, 200)}`;
}

export function isSuccess(answer: KubeAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** Reads a path of object members; undefined where one is missing or not an object. */
export function dig(value: unknown, ...path: (string | number)[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (typeof key === 'number') at = Array.isArray(at) ? (at as unknown[])[key] : undefined;
    else at = own(asRecord(at), key);
  }
  return at;
}

export const ok = (step: string, text: string): StepResult => ({ step, outcome: 'ok', text });
export const failed = (step: string, text: string): StepResult => ({ step, outcome: 'failed', text });
export const unproven = (step: string, text: string): StepResult => ({ step, outcome: 'unproven', text });

/** A refusal verify's own credentials caused, worded for the RBAC it needs. */
export function refusal(step: string, answer: KubeAnswer, needs: string): StepResult | undefined {
  if (answer.status === 401)
    return failed(step, `the API server refused the credentials (401): ${statusMessage(answer)}`);
  if (answer.status === 403)
    return failed(step, `forbidden: ${statusMessage(answer)}; verify needs ${needs}`);
  return undefined;
}
