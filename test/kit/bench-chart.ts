/**
 * A dependency-free SVG bar chart: webhook, bare Fastify and raw node
 * throughput per payload, with the targets drawn on the webhook's bar and the
 * ratios below.
 */

export interface ChartGroup {
  readonly label: string;
  readonly webhook: number;
  readonly fastify: number;
  readonly node: number;
  /** Medians of the per-round ratios (not ratios of the medians). */
  readonly webhookVsNode: number;
  readonly webhookVsFastify: number;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v: number): number {
  const exp = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * exp >= v) return m * exp;
  return 10 * exp;
}

/** The throughput targets drawn on each webhook bar: these fractions of raw node's and bare Fastify's. */
export const TARGET_RATIO = 0.8;
export const FASTIFY_TARGET_RATIO = 0.9;

export function renderChart(groups: readonly ChartGroup[], subtitle: string): string {
  const width = 760;
  const height = 440;
  const left = 70;
  const right = 20;
  const top = 70;
  const bottom = 120;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(1, ...groups.flatMap((g) => [g.webhook, g.fastify, g.node])) * 1.1);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const groupW = plotW / Math.max(groups.length, 1);
  const barW = Math.min(60, groupW / 4);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">Throughput: webhook, bare Fastify, raw node (requests/s, median of rounds)</text>`,
    `<text x="${width / 2}" y="44" text-anchor="middle" fill="#555">${escape(subtitle)}</text>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = (max / 5) * i;
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#555">${Math.round(v)}</text>`,
    );
  }
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#999"/>`);
  groups.forEach((g, i) => {
    const cx = left + groupW * i + groupW / 2;
    const bars: [number, string][] = [
      [g.webhook, '#2b6cb0'],
      [g.fastify, '#718096'],
      [g.node, '#cbd5e0'],
    ];
    const x0 = cx - (3 * barW + 16) / 2;
    bars.forEach(([v, color], j) => {
      const x = x0 + j * (barW + 8);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${color}"/>`,
        `<text x="${(x + barW / 2).toFixed(1)}" y="${(y(v) - 5).toFixed(1)}" text-anchor="middle">${Math.round(v)}</text>`,
      );
    });
    // The targets, where the webhook's bar should reach: TARGET_RATIO × raw node's throughput
    // (dashed) and FASTIFY_TARGET_RATIO × bare Fastify's (dotted).
    const line = (cls: string, v: number, dash: string) =>
      `<line class="${cls}" x1="${(x0 - 6).toFixed(1)}" x2="${(x0 + barW + 6).toFixed(1)}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#c53030" stroke-width="2" stroke-dasharray="${dash}"/>`;
    parts.push(
      line('target', g.node * TARGET_RATIO, '6 3'),
      line('target-fastify', g.fastify * FASTIFY_TARGET_RATIO, '2 2'),
    );
    const color = (ok: boolean) => (ok ? '#276749' : '#c53030');
    parts.push(
      `<text x="${cx.toFixed(1)}" y="${top + plotH + 20}" text-anchor="middle" font-weight="bold">${escape(g.label)}</text>`,
      `<text x="${cx.toFixed(1)}" y="${top + plotH + 36}" text-anchor="middle" fill="${color(g.webhookVsNode >= TARGET_RATIO)}">webhook/node ${g.webhookVsNode.toFixed(2)}</text>`,
      `<text x="${cx.toFixed(1)}" y="${top + plotH + 52}" text-anchor="middle" fill="${color(g.webhookVsFastify >= FASTIFY_TARGET_RATIO)}">webhook/Fastify ${g.webhookVsFastify.toFixed(2)}</text>`,
    );
  });
  // One legend entry per row, so that no label can run past the right edge.
  const lx = left + 10;
  const rows: [string, string][] = [
    ['#2b6cb0', 'webhook (Fastify, rules, metrics, logs)'],
    ['#718096', 'bare Fastify (same transport and body reader)'],
    ['#cbd5e0', 'raw node:https + JSON.parse'],
  ];
  rows.forEach(([color, label], i) => {
    const ly = height - 54 + i * 16;
    parts.push(
      `<rect x="${lx}" y="${ly}" width="12" height="12" fill="${color}"/>`,
      `<text x="${lx + 18}" y="${ly + 10}">${escape(label)}</text>`,
    );
  });
  const ty = height - 54 + 6;
  parts.push(
    `<line x1="${lx + 330}" x2="${lx + 354}" y1="${ty}" y2="${ty}" stroke="#c53030" stroke-width="2" stroke-dasharray="6 3"/>`,
    `<text x="${lx + 360}" y="${ty + 4}">target: ${TARGET_RATIO} × raw node</text>`,
    `<line x1="${lx + 330}" x2="${lx + 354}" y1="${ty + 16}" y2="${ty + 16}" stroke="#c53030" stroke-width="2" stroke-dasharray="2 2"/>`,
    `<text x="${lx + 360}" y="${ty + 20}">target: ${FASTIFY_TARGET_RATIO} × bare Fastify</text>`,
    '</svg>',
  );
  return parts.join('\n') + '\n';
}
