/** One renderer per `--output` value. */
import type { CheckReport, Summary } from '../report.js';
import type { OutputFormat } from '../options.js';
import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import { formatJunit } from './junit.js';
import { formatSarif } from './sarif.js';
import { formatText } from './text.js';

export const FORMATTERS: Readonly<Record<OutputFormat, (report: CheckReport, summary: Summary) => string>> = {
  text: formatText,
  json: formatJson,
  github: formatGithub,
  junit: formatJunit,
  sarif: formatSarif,
};
