/** Envoy's cluster counts from its admin port: how many clusters are serving and how many warm up. */
export interface ClusterCounts {
  readonly active: number;
  readonly warming: number;
}

/** One stat of `/stats?format=json`. */
interface JsonStat {
  readonly name?: string;
  readonly value?: number;
}

/**
 * Reads `cluster_manager.active_clusters` and `warming_clusters` from Envoy's admin
 * (`/stats?format=json`). A cluster serves traffic only once it is active: a route to a warming
 * cluster answers 503.
 */
export async function clusterCounts(adminUrl: string): Promise<ClusterCounts> {
  const filter = encodeURIComponent('^cluster_manager\\.(active|warming)_clusters$');
  const response = await fetch(`${adminUrl}/stats?format=json&filter=${filter}`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`Envoy admin answered ${response.status}`);
  const body = (await response.json()) as { stats?: readonly JsonStat[] };
  const value = (name: string): number =>
    body.stats?.find((stat) => stat.name === `cluster_manager.${name}`)?.value ?? NaN;
  return { active: value('active_clusters'), warming: value('warming_clusters') };
}

/** True once Envoy has at least `clusters` active clusters and none warming. */
export async function clustersReady(adminUrl: string, clusters: number): Promise<boolean> {
  const counts = await clusterCounts(adminUrl);
  return counts.active >= clusters && counts.warming === 0;
}
