/**
 * Flags that the commands acting on a cluster through the API server's admission objects (`verify`,
 * `disarm`) declare alike, written once so that their help and limits cannot drift apart.
 */
import type { FlagDefinitions } from '../config/flags.js';

export const API_SERVER_FLAGS = {
  kubeconfig: {
    kind: 'string',
    description: 'Kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config).',
  },
  timeout: {
    kind: 'duration',
    default: '15s',
    min: '1s',
    max: '5m',
    description: 'Deadline of each request to the API server.',
  },
} as const satisfies FlagDefinitions;
