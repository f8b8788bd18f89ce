/**
 * `routability-webhook audit`: what the webhook would say about the Gateways
 * already stored in the cluster. Thin on purpose: flags → context (as
 * `check --from-cluster` builds it) → paginated list → one audit pass → format.
 */
import { errorMessage } from '../error-text.js';
import { resolveContext } from '../check/context.js';
import { AUDIT_FORMATTERS, type AuditReport } from '../audit/format.js';
import { gatewayPageFetcher, gatewayPages } from '../audit/gateway-pages.js';
import { judgeWithContext } from '../audit/judge.js';
import { AUDIT_FLAGS, AUDIT_HELP, auditOptionsFrom } from '../audit/options.js';
import { auditPass } from '../audit/pass.js';
import { EXIT_OK, EXIT_VIOLATIONS } from '../io.js';
import { kubeClient } from '../kube/client.js';
import { defineCommand, helpHint } from './command.js';

const PAGE_TIMEOUT_MS = 30_000;

export const command = defineCommand({
  name: 'audit',
  summary: "judge the cluster's stored Gateways as the webhook would",
  flags: AUDIT_FLAGS,
  help: AUDIT_HELP,
  usageHint: helpHint('audit'),
  options: auditOptionsFrom,
  run: async (options, { io, fail }) => {
    const resolved = await resolveContext({ ...options, fromCluster: true }, io.env);
    // check's errors name its --from-cluster flag, which audit does not have: audit always reads the cluster.
    if (!resolved.ok) return fail(resolved.error.replace(/^--from-cluster: /, ''), { hint: resolved.usage });
    const { loadKubeconfig } = await import('../kube/kubeconfig.js');
    let loaded;
    try {
      loaded = loadKubeconfig({ kubeconfig: options.kubeconfig, env: io.env });
    } catch (err) {
      await resolved.allocations?.close();
      return fail(errorMessage(err));
    }
    const client = kubeClient(loaded.kc);
    const fetch = gatewayPageFetcher(client, {
      namespace: options.namespace,
      pageSize: options.pageSize,
      timeoutMs: PAGE_TIMEOUT_MS,
    });
    let result;
    try {
      result = await auditPass(
        gatewayPages(fetch),
        judgeWithContext(resolved.ctx, resolved.allocations?.prefetch),
        // Only the JUnit report lists the Gateways that passed.
        { audited: () => options.output === 'junit' },
      );
    } catch (err) {
      return fail(`${errorMessage(err)} at ${loaded.server}`);
    } finally {
      await resolved.allocations?.close();
      client.close();
    }
    const report: AuditReport = {
      settings: {
        cluster: loaded.server,
        context: loaded.source.kind === 'in-cluster' ? 'in-cluster' : loaded.kc.getCurrentContext(),
        namespace: options.namespace,
        serviceCidrs: resolved.settings.serviceCidrs,
        specPolicy: resolved.settings.specPolicy,
        statusPolicy: resolved.settings.statusPolicy,
        revision: resolved.ctx.revision ?? 'provisional',
        allocatedIPs: resolved.settings.allocatedIPs,
      },
      result,
      exitCode: result.violations > 0 ? EXIT_VIOLATIONS : EXIT_OK,
    };
    io.stdout.write(AUDIT_FORMATTERS[options.output](report));
    return report.exitCode;
  },
});
