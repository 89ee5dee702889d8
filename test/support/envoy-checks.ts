import { adminRequest } from '../../src/envoy/admin.js';

/**
 * How many Checks an Envoy has sent to Portcullis so far: the sum of its listener's ext_authz
 * `ok`, `denied` and `error` counters (admin `/stats`). The fast-path tests take the difference
 * around requests to tell whether Envoy decided by itself.
 */
export async function checksSoFar(adminUrl: string): Promise<number> {
  const filter = encodeURIComponent('^http\\.ingress\\.ext_authz\\.(ok|denied|error)$');
  const { body } = await adminRequest(adminUrl, `/stats?format=json&filter=${filter}`, { timeoutMs: 2_000 });
  const stats = (JSON.parse(body) as { stats: { name?: string; value?: number }[] }).stats;
  return stats.reduce((sum, stat) => sum + (stat.value ?? 0), 0);
}
