/**
 * One audit pass: every Gateway of the listed pages is judged as the webhook
 * would judge it (spec as a CREATE, status as a status update), and only the
 * findings are kept — never the objects — so memory follows the number of
 * findings, not the size of the cluster. Between pages (and every few
 * Gateways) the pass yields to the event loop, so admission is never starved.
 */
import type { JudgedFinding, JudgedGateway, Severity } from '../findings/evaluate.js';
import type { GatewayPage } from './gateway-pages.js';

/** The audit's finding is the judged finding, without a position. */
export type AuditFinding = JudgedFinding;

export interface AuditedGateway {
  readonly namespace: string;
  readonly name: string;
  /** metadata.uid, for reports that reference the Gateway. */
  readonly uid?: string;
  readonly findings: readonly AuditFinding[];
}

export interface CodeCount {
  readonly code: string;
  readonly check: 'spec' | 'status';
  readonly severity: Severity;
  readonly count: number;
}

export interface AuditResult {
  /** Gateways judged. */
  readonly gateways: number;
  readonly namespaces: number;
  readonly pages: number;
  /** Gateways with at least one finding, in list order. */
  readonly flagged: readonly AuditedGateway[];
  readonly violations: number;
  readonly warnings: number;
  /** Findings per code, scope and severity, sorted by code. */
  readonly byCode: readonly CodeCount[];
  /**
   * The Gateways judged, `namespace/name`, that `PassOptions.audited` asked for (default every one):
   * for reports that list passes too (JUnit). 100,000 of them are ~7 MiB, kept only when needed.
   */
  readonly audited: readonly string[];
}

/**
 * Judges one Gateway object: who it is, as the engine read it, and its findings. The caller binds
 * the rule context (ranges, revision, allocations).
 */
export type JudgeGateway = (object: unknown) => Promise<JudgedGateway> | JudgedGateway;

export interface PassOptions {
  /** Yield to the event loop after this many Gateways (default 50). */
  readonly yieldEvery?: number;
  /** How to yield; default setImmediate. */
  readonly pause?: () => Promise<void>;
  /** Which judged Gateways (`namespace/name`) the result's `audited` lists; default every one. */
  readonly audited?: (key: string) => boolean;
}

interface Identity {
  namespace: string;
  name: string;
  uid?: string;
}

/** Who the judged Gateway is; a missing namespace or name reads as empty. */
function identity(judged: JudgedGateway): Identity {
  const { namespace = '', name = '', uid } = judged;
  // No spread (`...(uid ? { uid } : {})`): objects built by spreading outlive young collections in V8
  // (src/rules/gateway.ts, readGateway).
  return uid ? { namespace, name, uid } : { namespace, name };
}

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class Tally {
  gateways = 0;
  pages = 0;
  violations = 0;
  warnings = 0;
  readonly namespaces = new Set<string>();
  readonly flagged: AuditedGateway[] = [];
  readonly audited: string[] = [];
  readonly counts = new Map<string, CodeCount>();

  constructor(private readonly keep: ((key: string) => boolean) | undefined) {}

  add(id: Identity, findings: readonly AuditFinding[]): void {
    this.gateways++;
    this.namespaces.add(id.namespace);
    const key = `${id.namespace}/${id.name}`;
    if (!this.keep || this.keep(key)) this.audited.push(key);
    if (findings.length === 0) return;
    this.flagged.push(
      id.uid
        ? { namespace: id.namespace, name: id.name, uid: id.uid, findings }
        : { namespace: id.namespace, name: id.name, findings },
    );
    for (const f of findings) {
      if (f.severity === 'violation') this.violations++;
      else this.warnings++;
      const key = `${f.code}\0${f.check}\0${f.severity}`;
      const prior = this.counts.get(key);
      this.counts.set(key, {
        code: f.code,
        check: f.check,
        severity: f.severity,
        count: (prior?.count ?? 0) + 1,
      });
    }
  }

  result(): AuditResult {
    const byCode = [...this.counts.values()].sort(
      (a, b) =>
        a.code.localeCompare(b.code) ||
        a.check.localeCompare(b.check) ||
        a.severity.localeCompare(b.severity),
    );
    return {
      gateways: this.gateways,
      namespaces: this.namespaces.size,
      pages: this.pages,
      flagged: this.flagged,
      violations: this.violations,
      warnings: this.warnings,
      byCode,
      audited: this.audited,
    };
  }
}

export async function auditPass(
  pages: AsyncIterable<GatewayPage>,
  judge: JudgeGateway,
  options: PassOptions = {},
): Promise<AuditResult> {
  const yieldEvery = Math.max(1, options.yieldEvery ?? 50);
  const pause = options.pause ?? immediate;
  let tally = new Tally(options.audited);
  let sinceYield = 0;
  for await (const page of pages) {
    if (page.restarted) tally = new Tally(options.audited);
    tally.pages++;
    // One object at a time: a page from the API server decodes each Gateway as it is read.
    for (const object of page.items) {
      const judged = await judge(object);
      tally.add(identity(judged), judged.findings);
      if (++sinceYield >= yieldEvery) {
        sinceYield = 0;
        await pause();
      }
    }
    await pause();
  }
  return tally.result();
}
