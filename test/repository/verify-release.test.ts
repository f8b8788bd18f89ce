/**
 * docs/verify-release.md tells a user how to check a release (issue 37, L1). Nothing can be
 * released from here, so this checks what can be: the page names the very identity the release
 * workflow signs with (this repository's release.yml on the version's tag, GitHub's OIDC issuer),
 * verifies each thing the workflow signs or attests, and is linked from SECURITY.md and README.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
// @ts-expect-error: a plain .mjs script without type declarations
import { releaseCoordinates } from '../../scripts/release-coordinates.mjs';

const REPO = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

const { version, image } = (releaseCoordinates as () => { version: string; image: string })();
const OWNER_REPO = image.replace(/^ghcr\.io\//, ''); // the image is named after the repository
const CHART = `${image.replace(/\/[^/]+$/, '')}/charts/gateway-routability-webhook`;
const ISSUER = 'https://token.actions.githubusercontent.com';

interface Job {
  permissions?: Record<string, string>;
  steps: { run?: string; uses?: string; with?: Record<string, unknown> }[];
}
const WORKFLOW_FILE = 'release.yml';
const workflowText = read(`.github/workflows/${WORKFLOW_FILE}`);
const workflow = parse(workflowText) as { on: { push: { tags: string[] } }; jobs: Record<string, Job> };
const signJob = workflow.jobs['sign'] as Job;
const signRuns = signJob.steps.map((s) => s.run ?? '').join('\n');

/** The identity Fulcio writes into a certificate for this workflow run on tag `tag`. */
const identity = (tag: string, file = WORKFLOW_FILE, ownerRepo = OWNER_REPO) =>
  `https://github.com/${ownerRepo}/.github/workflows/${file}@refs/tags/${tag}`;

const page = read('docs/verify-release.md');
/** Shell blocks of the page, continuation lines joined. */
const commands = [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => (m[1] as string).replace(/\\\n\s*/g, '').split('\n'))
  .map((l) => l.trim())
  .filter(Boolean);
const assigned = (name: string) =>
  commands.find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
const cosign = (verb: string) => commands.filter((c) => c.startsWith(`cosign ${verb} `));

/** glob of on.push.tags (`*` within a path segment), as GitHub matches a tag name. */
const tagGlob = (glob: string) =>
  new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);

describe('docs/verify-release.md and release.yml agree', () => {
  it("the identity is this repository's release workflow on the tag of the page's version", () => {
    expect(assigned('VERSION')).toBe(version);
    expect(assigned('IDENTITY')).toBe(identity(`v${version}`));
    expect(assigned('ISSUER')).toBe(ISSUER);
    // The workflow runs, and signs, on exactly such a tag.
    expect(workflow.on.push.tags.some((g) => tagGlob(g).test(`v${version}`))).toBe(true);
    expect(signJob.permissions?.['id-token']).toBe('write');
  });

  it('every verify command checks that identity and issuer', () => {
    const verifies = commands.filter((c) => /^cosign verify/.test(c));
    expect(verifies.length).toBeGreaterThanOrEqual(5);
    for (const c of verifies) {
      expect(c, c).toMatch(/--certificate-identity(-regexp)? /);
      expect(c, c).toContain('--certificate-oidc-issuer "$ISSUER"');
      if (!c.includes('--certificate-identity-regexp'))
        expect(c, c).toContain('--certificate-identity "$IDENTITY"');
    }
  });

  it('the regexp form accepts every release of this workflow and nothing else', () => {
    const regexps = commands.flatMap((c) =>
      [...c.matchAll(/--certificate-identity-regexp '([^']+)'/g)].map((m) => m[1] as string),
    );
    expect(regexps).toHaveLength(1);
    const re = new RegExp(regexps[0] as string); // RE2 and JavaScript agree on this syntax
    for (const ok of [identity(`v${version}`), identity('v1.2.3'), identity('v10.20.30')])
      expect(re.test(ok), ok).toBe(true);
    for (const bad of [
      identity(`v${version}`, 'ci.yml'), // another workflow of the repository
      identity(`v${version}`, WORKFLOW_FILE, 'someone/gateway-routability-webhook'), // a fork
      identity(`v${version}`).replace('refs/tags/', 'refs/heads/'), // a branch, not a tag
      `${identity(`v${version}`)}-evil`,
      `https://github.com/${OWNER_REPO}/.github/workflows/release.yml@refs/tags/v1.2`,
      `https://evil.example/?${identity('v1.2.3')}`,
    ])
      expect(re.test(bad), bad).toBe(false);
  });

  it('verifies the image the workflow signs, and its SBOM attestations and provenance', () => {
    expect(signRuns).toContain('cosign sign --yes "$IMAGE@$IMAGE_DIGEST"');
    expect(assigned('IMAGE')).toBe(`${image}:${version}`);
    expect(cosign('verify').some((c) => c.startsWith('cosign verify "$IMAGE"'))).toBe(true);
    expect(signRuns).toMatch(
      /cosign attest --yes --type spdxjson --predicate "\$sbom" "\$IMAGE@\$IMAGE_DIGEST"/,
    );
    expect(cosign('verify-attestation').some((c) => c.includes('--type spdxjson "$IMAGE"'))).toBe(true);
    const build = (workflow.jobs['image'] as Job).steps.find((s) =>
      s.uses?.startsWith('docker/build-push-action'),
    );
    expect(build?.with?.['provenance']).toBe('mode=max');
    expect(page).toContain(`docker buildx imagetools inspect "${image}@sha256:`);
    expect(page).toContain("--format '{{ json .Provenance }}'");
  });

  it('verifies the chart the workflow signs, at the same coordinates', () => {
    expect(signRuns).toContain('cosign sign --yes "$CHART@$CHART_DIGEST"');
    expect(workflowText).toContain('echo "repository=${CHARTS#oci://}/gateway-routability-webhook"');
    expect(cosign('verify').some((c) => c.startsWith(`cosign verify ${CHART}:${version} `))).toBe(true);
    expect(commands).toContain(`helm pull oci://${CHART} --version ${version}`);
  });

  it("verifies the release files' signed SHA256SUMS, as the workflow writes it", () => {
    expect(signRuns).toContain('sha256sum -- * > SHA256SUMS');
    expect(signRuns).toContain('cosign sign-blob --yes --bundle SHA256SUMS.sigstore.json SHA256SUMS');
    const verify = cosign('verify-blob');
    expect(verify).toHaveLength(1);
    expect(verify[0]).toMatch(/^cosign verify-blob --bundle SHA256SUMS\.sigstore\.json .* SHA256SUMS$/);
    expect(commands).toContain('sha256sum --check SHA256SUMS');
    // The release publishes what was summed: the sign job's folder, uploaded and released whole.
    expect(workflowText).toContain('gh release create');
  });

  it('SECURITY.md names the same signer and links the page; README lists it', () => {
    const security = read('SECURITY.md');
    expect(security).toContain('(docs/verify-release.md)');
    expect(security).toContain(identity('vX.Y.Z'));
    expect(security).toContain(ISSUER);
    expect(read('docs/README.md')).toContain('[verify-release.md](verify-release.md)');
  });
});
