/**
 * Gateway CRDs as an API server returns them, for the fake API server: the
 * Gateway API v1.6.1 manifests from test/fixtures/upstream, optionally patched by
 * crd-patch for one revision, with the metadata and status an API server adds
 * (uid, generation, creationTimestamp, managedFields, conditions).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { patchGatewayCrd } from '../../src/crd/patch.js';
import type { GepRevision } from '../../src/rules/revision.js';

import { GATEWAY_API_CRDS as CRD_FIXTURES } from './upstream-fixtures.js';

export { CRD_FIXTURES };

type Obj = Record<string, unknown> & { metadata: { name: string } & Record<string, unknown> };

/** The fixture manifest (what `kubectl apply` sends). */
export function gatewayCrdManifest(channel: 'standard' | 'experimental' = 'standard'): Obj {
  return YAML.parse(readFileSync(join(CRD_FIXTURES, `${channel}-gateways.yaml`), 'utf8')) as Obj;
}

/** The manifest with routability added by crd-patch for `revision`, or unpatched. */
export function gatewayCrdWith(
  revision: GepRevision | 'none',
  channel: 'standard' | 'experimental' = 'standard',
): Obj {
  const manifest = gatewayCrdManifest(channel);
  if (revision === 'none') return manifest;
  const patched = patchGatewayCrd(manifest, revision);
  if (!patched.ok) throw new Error(patched.problems.join('; '));
  return patched.crd as Obj;
}

/** What an API server stores and returns for that manifest. */
export function asStored(manifest: Obj, generation = 1): Obj {
  const time = '2026-11-30T09:12:44Z';
  return {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      uid: '5f0c2a59-1c41-4b3e-9a51-1f9f3c2a7e10',
      generation,
      creationTimestamp: time,
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'apiextensions.k8s.io/v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:annotations': {} }, 'f:spec': { 'f:group': {}, 'f:versions': {} } },
        },
        {
          manager: 'kube-apiserver',
          operation: 'Update',
          apiVersion: 'apiextensions.k8s.io/v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:acceptedNames': {}, 'f:conditions': {} } },
          subresource: 'status',
        },
      ],
    },
    status: {
      acceptedNames: {
        kind: 'Gateway',
        listKind: 'GatewayList',
        plural: 'gateways',
        singular: 'gateway',
        shortNames: ['gtw'],
      },
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          reason: 'NoConflicts',
          message: 'no conflicts found',
          lastTransitionTime: time,
        },
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
          lastTransitionTime: time,
        },
      ],
      storedVersions: ['v1'],
    },
  };
}

/** A stored Gateway CRD carrying `revision` (or none), ready for `fake.crds.set()`. */
export function storedGatewayCrd(
  revision: GepRevision | 'none',
  opts: { channel?: 'standard' | 'experimental'; generation?: number } = {},
): Obj {
  return asStored(gatewayCrdWith(revision, opts.channel), opts.generation);
}
