/** A dependency-free SVG bar chart: webhook vs baseline throughput per payload, with ratio labels. */

export interface ChartGroup {
  readonly label: string;
  readonly webhook: number;
  readonly baseline: number;
  /** Median of the per-round ratios (not webhook/baseline of the medians). */
  readonly ratio: number;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v: number): number {
  const exp = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * exp >= v) return m * exp;
  return 10 * exp;
}

/** The throughput target drawn on each webhook bar: this fraction of the baseline's. */
export const TARGET_RATIO = 0.85;

export function renderChart(groups: readonly ChartGroup[], subtitle: string): string {
  const width = 760;
  const height = 440;
  const left = 70;
  const right = 20;
  const top = 70;
  const bottom = 100;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(1, ...groups.flatMap((g) => [g.webhook, g.baseline])) * 1.1);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const groupW = plotW / Math.max(groups.length, 1);
  const barW = Math.min(80, groupW / 3);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">Throughput: webhook vs baseline (requests/s, median of rounds)</text>`,
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
    const bars: [number, string, string][] = [
      [g.webhook, '#2b6cb0', 'webhook'],
      [g.baseline, '#a0aec0', 'baseline'],
    ];
    bars.forEach(([v, color], j) => {
      const x = cx - barW - 4 + j * (barW + 8);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${color}"/>`,
        `<text x="${(x + barW / 2).toFixed(1)}" y="${(y(v) - 5).toFixed(1)}" text-anchor="middle">${Math.round(v)}</text>`,
      );
    });
    // The target, where the webhook's bar should reach: TARGET_RATIO × the baseline's throughput.
    const tx = cx - barW - 4;
    const ty = y(g.baseline * TARGET_RATIO).toFixed(1);
    parts.push(
      `<line class="target" x1="${(tx - 6).toFixed(1)}" x2="${(tx + barW + 6).toFixed(1)}" y1="${ty}" y2="${ty}" stroke="#c53030" stroke-width="2" stroke-dasharray="6 3"/>`,
    );
    const ratioColor = g.ratio >= TARGET_RATIO ? '#276749' : '#c53030';
    parts.push(
      `<text x="${cx.toFixed(1)}" y="${top + plotH + 20}" text-anchor="middle" font-weight="bold">${escape(g.label)}</text>`,
      `<text x="${cx.toFixed(1)}" y="${top + plotH + 38}" text-anchor="middle" fill="${ratioColor}">ratio ${g.ratio.toFixed(2)}</text>`,
    );
  });
  // One legend entry per row, so that no label can run past the right edge.
  const lx = left + 10;
  const rows: [string, string][] = [
    ['#2b6cb0', 'webhook (Fastify, rules, metrics, one log line per review)'],
    ['#a0aec0', 'baseline (node:https + JSON.parse + JSON.stringify)'],
  ];
  rows.forEach(([color, label], i) => {
    const ly = height - 44 + i * 18;
    parts.push(
      `<rect x="${lx}" y="${ly}" width="12" height="12" fill="${color}"/>`,
      `<text x="${lx + 18}" y="${ly + 10}">${escape(label)}</text>`,
    );
  });
  const ty = height - 44 + 6;
  parts.push(
    `<line x1="${lx + 400}" x2="${lx + 424}" y1="${ty}" y2="${ty}" stroke="#c53030" stroke-width="2" stroke-dasharray="6 3"/>`,
    `<text x="${lx + 430}" y="${ty + 4}">target: ${TARGET_RATIO} × baseline</text>`,
    '</svg>',
  );
  return parts.join('\n') + '\n';
}
