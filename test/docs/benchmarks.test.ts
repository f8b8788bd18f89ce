/**
 * docs/dev/benchmarks.md agrees with itself and with its chart: the chart is the results table drawn
 * by test/kit/bench-chart.ts, the figures quoted in the prose are the table's, and no legend label runs
 * off the picture.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FASTIFY_TARGET_RATIO, renderChart, TARGET_RATIO } from '../kit/bench-chart.js';
import { REPO } from './markdown.js';

const DOC = readFileSync(join(REPO, 'docs', 'dev', 'benchmarks.md'), 'utf8');
const SVG_FILE = join(REPO, 'docs', 'dev', 'benchmarks-chart.svg');
const num = (s: string) => Number(s.replace(/,/g, ''));

/**
 * Rows of the final run's results table: payload, webhook, bare Fastify and raw node req/s, then
 * (after the per-round column) the median ratios webhook / raw node and webhook / bare Fastify.
 */
function results() {
  const section = DOC.slice(DOC.indexOf('### Results'), DOC.indexOf('### Targets'));
  return [
    ...section.matchAll(
      /^\| ([a-z-]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| [^|]+ \| \*\*([\d.]+)\*\* \| \*\*([\d.]+)\*\* \|/gm,
    ),
  ].map((m) => ({
    label: m[1]!,
    webhook: num(m[2]!),
    fastify: num(m[3]!),
    node: num(m[4]!),
    webhookVsNode: Number(m[5]),
    webhookVsFastify: Number(m[6]),
  }));
}

describe('docs/dev/benchmarks.md', () => {
  it('has the results table', () => {
    expect(results().map((r) => r.label)).toEqual(['create-small', 'update-large', 'status-mutate']);
  });

  it('its chart is the results table, drawn with the target line', () => {
    const committed = readFileSync(SVG_FILE, 'utf8');
    const subtitle =
      /<text[^>]*fill="#555">([^<]*)<\/text>/.exec(committed)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const drawn = renderChart(results(), subtitle);
    if (process.env['UPDATE_DOCS_CHART'] === '1') writeFileSync(SVG_FILE, drawn);
    expect(committed, 'redraw with UPDATE_DOCS_CHART=1 npx vitest run test/docs/benchmarks.test.ts').toBe(
      drawn,
    );
    expect(drawn.match(/class="target"/g)).toHaveLength(results().length);
    expect(drawn.match(/class="target-fastify"/g)).toHaveLength(results().length);
    expect(drawn).toContain(`target: ${TARGET_RATIO} × raw node`);
    expect(drawn).toContain(`target: ${FASTIFY_TARGET_RATIO} × bare Fastify`);
  });

  it('no text of the chart runs past its right edge', () => {
    const svg = renderChart(results(), 'subtitle');
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    for (const m of svg.matchAll(/<text x="([\d.]+)"([^>]*)>([^<]*)<\/text>/g)) {
      const size = Number(/font-size="(\d+)"/.exec(m[2]!)?.[1] ?? 12);
      // Helvetica's widest common glyphs average under 0.6 em.
      const textWidth = m[3]!.length * size * 0.6;
      const anchor = /text-anchor="(\w+)"/.exec(m[2]!)?.[1] ?? 'start';
      const right = Number(m[1]) + (anchor === 'start' ? textWidth : anchor === 'middle' ? textWidth / 2 : 0);
      expect(right, `"${m[3]}" ends at ${right.toFixed(0)} of ${width}`).toBeLessThanOrEqual(width);
    }
  });

  it('quotes readiness and throughput as the tables give them', () => {
    const ready = /spawn → `\/readyz` 200 \((\d) runs\) \| ([\d, ]+) ms/.exec(DOC)!;
    const readyMs = ready[2]!.split(',').map(num);
    expect(readyMs).toHaveLength(Number(ready[1]));
    expect(DOC).toContain(`≤ ${Math.max(...readyMs)} ms`);

    const rps = results().map((r) => r.webhook);
    const quoted = /at the measured ([\d,]+)–([\d,]+) reviews\/s/.exec(DOC)!;
    expect([num(quoted[1]!), num(quoted[2]!)]).toEqual([Math.min(...rps), Math.max(...rps)]);
  });
});
