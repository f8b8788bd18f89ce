/**
 * One release: package.json, Chart.yaml version and appVersion name one
 * version, and the chart, the release workflow and the docs name one image
 * (the chart's values.yaml image.repository, read by
 * scripts/release-coordinates.mjs for release.yml).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
// @ts-expect-error: a plain .mjs script without type declarations
import { releaseCoordinates } from '../../scripts/release-coordinates.mjs';

const REPO = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const CHART = 'charts/gateway-routability-webhook';

const pkg = JSON.parse(read('package.json')) as { version: string };
const chart = YAML.parse(read(`${CHART}/Chart.yaml`)) as { version: string; appVersion: string };
const values = YAML.parse(read(`${CHART}/values.yaml`)) as { image: { repository: string; tag: string } };
const IMAGE = values.image.repository;

interface Coordinates {
  version: string;
  image: string | undefined;
  problems: string[];
}
const coordinates = releaseCoordinates as (files?: { read(path: string): string }) => Coordinates;

/** Every Markdown page of the documentation: README, docs/, docs/dev/, the chart README. */
const docs = [
  'README.md',
  `${CHART}/README.md`,
  ...['docs', 'docs/dev'].flatMap((folder) =>
    readdirSync(join(REPO, folder))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `${folder}/${f}`),
  ),
];

describe('one version', () => {
  it('package.json version = Chart.yaml version = appVersion', () => {
    expect(chart.version).toBe(pkg.version);
    expect(chart.appVersion).toBe(pkg.version);
    expect(coordinates()).toEqual({ version: pkg.version, image: IMAGE, problems: [] });
  });

  it('the chart runs its appVersion unless told otherwise', () => {
    expect(values.image.tag).toBe('');
    expect(read(`${CHART}/templates/_helpers.tpl`)).toContain(
      '(default .Chart.AppVersion .Values.image.tag)',
    );
  });

  it('release-coordinates.mjs notices versions that disagree', () => {
    const stub = (path: string) =>
      path === 'package.json' ? JSON.stringify({ version: '9.9.9' }) : read(path);
    expect(coordinates({ read: stub }).problems).toEqual([
      `package.json version 9.9.9, Chart.yaml version ${chart.version}, appVersion ${chart.appVersion}: they must be one version`,
    ]);
  });
});

describe('one image', () => {
  it('is under ghcr.io, named by the chart, and read from there by release-coordinates.mjs', () => {
    expect(IMAGE).toMatch(/^ghcr\.io\/[a-z0-9-]+\/gateway-routability-webhook$/);
    expect(coordinates().image).toBe(IMAGE);
    const chartReadme = read(`${CHART}/README.md`);
    expect(chartReadme).toContain(`| \`image.repository\` | \`${IMAGE}\` |`);
  });

  it('release.yml takes the image and chart registry from release-coordinates.mjs, not its own', () => {
    const workflow = read('.github/workflows/release.yml');
    expect(workflow).not.toMatch(/ghcr\.io\/\$|GITHUB_REPOSITORY_OWNER/);
    expect(workflow.match(/node scripts\/release-coordinates\.mjs/g)).toHaveLength(3);
  });

  it.each(docs)('%s names no other image of this project, and no other version of it', (doc) => {
    const text = read(doc);
    const images = [...text.matchAll(/ghcr\.io\/[^\s`'":@/]+\/gateway-routability-webhook(?::([\w.-]+))?/g)];
    for (const [ref, tag] of images) {
      expect(ref.replace(/:[\w.-]+$/, ''), `${doc}: ${ref}`).toBe(IMAGE);
      if (tag !== undefined) expect(tag, `${doc}: ${ref}`).toBe(pkg.version);
    }
    expect(text, doc).not.toContain('ghcr.io/<owner>');
  });

  it('install-reference.md says what is published where', () => {
    const install = read('docs/install-reference.md').replace(/\s+/g, ' ');
    expect(install).toContain(
      `| the image, linux/amd64 and linux/arm64 | \`${IMAGE}\`, tags \`X.Y.Z\` and \`X.Y\``,
    );
    const charts = IMAGE.replace(/\/gateway-routability-webhook$/, '/charts');
    expect(install).toContain(
      `| the chart | \`oci://${charts}/gateway-routability-webhook\`, version \`X.Y.Z\``,
    );
  });
});

describe('LICENSE, CHANGELOG.md, SECURITY.md', () => {
  it("LICENSE is the Apache License 2.0 that package.json's license names", () => {
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('Apache-2.0');
    const license = read('LICENSE');
    expect(license).toMatch(/^ +Apache License\n +Version 2\.0, January 2004\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    expect(license).toContain('9. Accepting Warranty or Additional Liability.');
  });

  it("CHANGELOG.md has an entry for package.json's version, and SECURITY.md names its minor", () => {
    expect(read('CHANGELOG.md')).toMatch(
      new RegExp(`^## \\[${pkg.version.replaceAll('.', '\\.')}\\] - `, 'm'),
    );
    const minor = pkg.version.split('.').slice(0, 2).join('.');
    expect(read('SECURITY.md')).toContain(`| ${minor}.x (newest) | yes |`);
  });
});
