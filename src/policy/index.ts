/** The ValidatingAdmissionPolicy generator and its params: the `policy` command and serve use this module. */
export {
  actionOf,
  applyPath,
  DEFAULT_POLICY_NAMES,
  EXISTING_NAMESPACES,
  generatePolicies,
  OUT_OF_SCOPE,
  PARAMS_KEYS,
  paramsConfigMap,
  paramsData,
  policyManifest,
  type GeneratedPolicy,
  type PolicyAction,
  type PolicyNames,
  type PolicySettings,
} from './generate.js';
