#!/usr/bin/env node
// Writes the chart's policy files (charts/gateway-routability-webhook/files/policy/<revision>.json)
// from the built generator (dist/policy/chart-form.js): `npm run policy:chart`. The chart assembles
// its ValidatingAdmissionPolicies from them; test/chart/policy.test.ts fails when they are stale.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { chartPolicyFile, CHART_REVISIONS } = await import(join(root, 'dist', 'policy', 'chart-form.js'));
const dir = join(root, 'charts', 'gateway-routability-webhook', 'files', 'policy');
mkdirSync(dir, { recursive: true });
for (const revision of CHART_REVISIONS) {
  const path = join(dir, `${revision}.json`);
  writeFileSync(path, chartPolicyFile(revision));
  console.log(`wrote ${path.slice(root.length + 1)}`);
}
