/**
 * The published report CRDs (test/fixtures/report-crds) as validators that
 * judge an object as the API server would: the openAPIV3Schema's types,
 * enums and required fields, and structural pruning — a field the schema
 * does not declare is dropped, and reported as pruned so a test can tell
 * which fields a given CRD would lose.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import YAML from 'yaml';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'report-crds');

export const REPORT_CRD_FILES = {
  policyreport: 'wgpolicyk8s.io_policyreports.v1alpha2.yaml',
  policyreportKyverno: 'wgpolicyk8s.io_policyreports.v1alpha2.kyverno.yaml',
  openreports: 'openreports.io_reports.v1alpha1.yaml',
} as const;
export type ReportCrd = keyof typeof REPORT_CRD_FILES;

interface Crd {
  spec: {
    group: string;
    names: { plural: string; kind: string };
    versions: { name: string; schema: { openAPIV3Schema: Record<string, unknown> } }[];
  };
}

export function loadReportCrd(which: ReportCrd): Crd {
  return YAML.parse(readFileSync(join(DIR, REPORT_CRD_FILES[which]), 'utf8')) as Crd;
}

/**
 * OpenAPI v3 (Kubernetes flavour) → JSON Schema for ajv: `x-kubernetes-*` and
 * `format` dropped (int32/int64 are not JSON Schema formats), and objects
 * with declared properties closed, which is what pruning amounts to.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('x-kubernetes-') || k === 'format' || k === 'description') continue;
    if (k === 'properties') {
      out[k] = Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, toJsonSchema(s)]));
      continue;
    }
    out[k] = toJsonSchema(v);
  }
  if (out['properties'] && out['additionalProperties'] === undefined) out['additionalProperties'] = false;
  return out;
}

export interface ReportValidation {
  /** Schema errors after pruning (what the API server would answer 422 for). */
  readonly errors: string[];
  /** JSON paths of fields the CRD does not declare (dropped by the API server). */
  readonly pruned: string[];
  /** The object as it would be stored. */
  readonly stored: unknown;
}

export type ReportValidator = (object: unknown) => ReportValidation;

/** Paths present in `before` and missing in `after` (objects only; arrays index-aligned). */
function missing(before: unknown, after: unknown, path: string, out: string[]): void {
  if (Array.isArray(before) && Array.isArray(after)) {
    before.forEach((b, i) => missing(b, after[i], `${path}[${i}]`, out));
    return;
  }
  if (typeof before !== 'object' || before === null || typeof after !== 'object' || after === null) return;
  for (const [k, v] of Object.entries(before)) {
    if (!(k in after)) out.push(`${path}.${k}`);
    else missing(v, (after as Record<string, unknown>)[k], `${path}.${k}`, out);
  }
}

export function reportValidator(which: ReportCrd): ReportValidator {
  const crd = loadReportCrd(which);
  const schema = toJsonSchema(crd.spec.versions[0]!.schema.openAPIV3Schema) as object;
  const ajv = new Ajv({ allErrors: true, strict: true, removeAdditional: true });
  const validate = ajv.compile(schema);
  return (object) => {
    const stored = structuredClone(object);
    const ok = validate(stored);
    const errors = ok
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'}`);
    const pruned: string[] = [];
    missing(object, stored, '', pruned);
    return { errors, pruned, stored };
  };
}
