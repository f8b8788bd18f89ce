#!/usr/bin/env node
// The release's coordinates, derived in one place: the chart's values.yaml `image.repository`
// names the image (and, beside it, the chart registry), and package.json, Chart.yaml `version`
// and `appVersion` name the version (docs/dev/decisions.md). release.yml appends what this prints to
// $GITHUB_OUTPUT:
//   version=X.Y.Z
//   image=ghcr.io/OWNER/gateway-routability-webhook
//   tags=IMAGE:X.Y.Z,IMAGE:X.Y
//   charts=oci://ghcr.io/OWNER/charts
// and it exits 1, with one ::error:: line per problem, when the versions disagree, when the tag
// ($GITHUB_REF_NAME, vX.Y.Z) is not that version, or when the image is not under the pushing
// repository's owner ($GITHUB_REPOSITORY_OWNER, lower-cased: registry paths are lower case).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path) => readFileSync(join(root, path), 'utf8');

/** The coordinates as the repository states them, and what disagrees. */
export function releaseCoordinates(files = { read }) {
  const pkg = JSON.parse(files.read('package.json'));
  const chart = files.read('charts/gateway-routability-webhook/Chart.yaml');
  const values = files.read('charts/gateway-routability-webhook/values.yaml');
  const chartVersion = /^version: *"?([^"\s]+)"?\s*$/m.exec(chart)?.[1];
  const appVersion = /^appVersion: *"?([^"\s]+)"?\s*$/m.exec(chart)?.[1];
  const image = /^image:\n(?:[ \t]+#.*\n)*[ \t]+repository: *"?([^"\s]+)"?\s*$/m.exec(values)?.[1];
  const problems = [];
  if (chartVersion !== pkg.version || appVersion !== pkg.version)
    problems.push(
      `package.json version ${pkg.version}, Chart.yaml version ${chartVersion}, appVersion ${appVersion}: they must be one version`,
    );
  if (!image) problems.push('charts/gateway-routability-webhook/values.yaml has no image.repository');
  return { version: pkg.version, image, problems };
}

function main(env) {
  const { version, image, problems } = releaseCoordinates();
  const tag = env.GITHUB_REF_NAME;
  if (tag !== undefined && tag !== `v${version}`)
    problems.push(`tag ${tag} but the version is ${version} (package.json, Chart.yaml): tag v${version}`);
  const owner = env.GITHUB_REPOSITORY_OWNER?.toLowerCase();
  if (owner !== undefined && image && !image.startsWith(`ghcr.io/${owner}/`))
    problems.push(
      `values.yaml image.repository is ${image}, which ${env.GITHUB_REPOSITORY_OWNER} cannot push: set it to ghcr.io/${owner}/gateway-routability-webhook`,
    );
  if (problems.length > 0) {
    for (const p of problems) console.log(`::error::${p}`);
    return 1;
  }
  const minor = version.split('.').slice(0, 2).join('.');
  console.log(`version=${version}`);
  console.log(`image=${image}`);
  console.log(`tags=${image}:${version},${image}:${minor}`);
  console.log(`charts=oci://${dirname(image)}/charts`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.env);
