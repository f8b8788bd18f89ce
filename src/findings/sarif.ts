/**
 * `--output sarif`: a SARIF 2.1.0 log for code scanning (GitHub, GitLab, and
 * other consumers that keep alerts across runs). One run; one rule per code
 * of the message catalogue; one result per finding, placed where the text
 * output places it; input problems as tool execution notifications.
 * `check` and the audit share it: the audit's results carry only logical
 * locations (the cluster object and field), having no file to point at.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CATALOGUE, RULE_CODES, type RuleCode } from '../rules/index.js';
import { jsonOutput } from './json.js';
import {
  gatewayLabel,
  STDIN_DISPLAY,
  type InputProblem,
  type PlacedFinding,
  type Position,
} from './lines.js';

/** Where the project lives: the tool's informationUri and, per version tag, its rules' help. */
export const PROJECT_URI = 'https://github.com/gateway-routability-webhook/gateway-routability-webhook';
export const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';
/** The partialFingerprints key: a new scheme gets a new key, so old alerts are not matched wrongly. */
export const FINGERPRINT_KEY = 'routabilityFinding/v1';

/** What the log says about the tool that wrote it. */
export interface ToolInfo {
  readonly name: string;
  readonly version: string;
}

/** This CLI and the package's version (src/findings/ and dist/findings/ alike sit two folders below package.json). */
export const TOOL: ToolInfo = {
  name: 'routability-webhook',
  version: (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version,
};

/** A code's section of docs/messages.md, as published with this version. */
export function helpUri(code: string, version: string): string {
  return `${PROJECT_URI}/blob/v${version}/docs/messages.md#${code.toLowerCase()}`;
}

const OUTCOME = {
  invalid: 'Denied under every policy.',
  violation: 'Denied under the enforce policy, a warning under warn.',
  warning: 'A warning only: never denied.',
} as const;

function rule(code: RuleCode, version: string): unknown {
  const entry = CATALOGUE[code];
  const example = entry.message(entry.example.field, entry.example.params as never);
  return {
    id: code,
    name: code,
    shortDescription: { text: entry.summary },
    fullDescription: {
      text: `${entry.summary} Checked in ${entry.lists.join(' and ')}. ${OUTCOME[entry.severity]} Example: ${example}`,
    },
    helpUri: helpUri(code, version),
    defaultConfiguration: { level: entry.severity === 'warning' ? 'warning' : 'error' },
  };
}

/** A path as a URI reference: relative paths stay relative (to the working folder), absolute ones become file URIs. */
export function artifactUri(path: string): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return path.startsWith('/') ? `file://${encoded}` : encoded;
}

function physicalLocation(file: string, position: Position | undefined): unknown {
  return {
    artifactLocation: { uri: artifactUri(file) },
    ...(position ? { region: { startLine: position.line, startColumn: position.column } } : {}),
  };
}

/** The Gateway a finding belongs to, and where in a file when it came from one. */
export interface SarifSubject {
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** The display path; undefined (the audit) or `<stdin>`: no physical location. */
  readonly file?: string | undefined;
  /** Stands in for the name in the fingerprint of an unnamed Gateway (its document and List items). */
  readonly anonymous?: string;
  readonly finding: PlacedFinding;
}

/** `apps/internal`, the object as kubectl names it; `<unnamed>` for a manifest without a name. */
function objectName(s: SarifSubject): string {
  const name = s.name ?? '<unnamed>';
  return s.namespace ? `${s.namespace}/${name}` : name;
}

/**
 * Stable across runs and unchanged when unrelated lines move: the rule, the
 * file, the Gateway, which admission and the field; never a line or column.
 * `seen` numbers findings that share all of these, in report order.
 */
function fingerprint(s: SarifSubject, seen: Map<string, number>): string {
  const f = s.finding;
  const identity = [f.code, s.file ?? '', s.namespace ?? '', s.name ?? s.anonymous ?? '', f.check, f.field];
  const hash = createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 32);
  const n = (seen.get(hash) ?? 0) + 1;
  seen.set(hash, n);
  return `${hash}:${n}`;
}

function result(s: SarifSubject, seen: Map<string, number>): unknown {
  const f = s.finding;
  const physical = s.file !== undefined && s.file !== STDIN_DISPLAY;
  const index = RULE_CODES.indexOf(f.code as RuleCode);
  return {
    ruleId: f.code,
    ...(index >= 0 ? { ruleIndex: index } : {}),
    level: f.severity === 'violation' ? 'error' : 'warning',
    message: { text: `${gatewayLabel(s)}: ${f.message}` },
    locations: [
      {
        ...(physical ? { physicalLocation: physicalLocation(s.file!, f.position) } : {}),
        logicalLocations: [
          { kind: 'member', name: f.field, fullyQualifiedName: `${objectName(s)}.${f.field}` },
        ],
      },
    ],
    partialFingerprints: { [FINGERPRINT_KEY]: fingerprint(s, seen) },
    properties: { check: f.check, namespace: s.namespace ?? null, name: s.name ?? null },
  };
}

function notification(e: InputProblem): unknown {
  return {
    level: 'error',
    message: { text: e.message },
    descriptor: { id: e.code },
    // Standard input is no artifact a consumer can open: the message alone.
    ...(e.file === STDIN_DISPLAY
      ? {}
      : { locations: [{ physicalLocation: physicalLocation(e.file, e.position) }] }),
  };
}

/** The log: one run with every rule, the results, and the invocation's outcome. */
export function sarifOutput(
  tool: ToolInfo,
  subjects: Iterable<SarifSubject>,
  run: { readonly errors: readonly InputProblem[]; readonly exitCode: number },
): string {
  const seen = new Map<string, number>();
  const results = [...subjects].map((s) => result(s, seen));
  const notifications = run.errors.map(notification);
  return jsonOutput({
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: tool.name,
            version: tool.version,
            informationUri: PROJECT_URI,
            rules: RULE_CODES.map((code) => rule(code, tool.version)),
          },
        },
        invocations: [
          {
            executionSuccessful: run.errors.length === 0,
            exitCode: run.exitCode,
            ...(notifications.length > 0 ? { toolExecutionNotifications: notifications } : {}),
          },
        ],
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  });
}
