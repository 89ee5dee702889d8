import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parse as parseYaml, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { migrateRoutes, type MigrationChange } from './migrate-routes.js';

export type { MigrationChange };
import { REMOVED_OPTIONS } from './removed-options.js';
import type { ReadText } from './sources.js';

/** Older spellings that still load but are rewritten to today's key. */
const SPELLINGS: readonly [string, string][] = [
  ['jwt_claims_header', 'jwt_claims_headers'],
  ['ipd_request_params', 'idp_request_params'],
];

/**
 * Rewrites removed and renamed options in `doc` (edited in place, so YAML comments and key order
 * survive) into today's form, following the removed-options table: renames (cache_service_url,
 * headers), deletions with their reason, tracing_debug -> tracing_sampling_rate, policy_file
 * inlined under routes, policy -> routes, the cache service -> databroker, allowed_groups and the
 * groups criterion -> claim/groups. Returns every change; entries marked `manual` need a person.
 */
export function migrateDocument(doc: Document, readText: ReadText): MigrationChange[] {
  const root = doc.contents;
  if (!isMap(root))
    return [{ path: '', message: 'the config is not a map of options; nothing migrated', manual: true }];
  const changes: MigrationChange[] = [];
  for (const removed of REMOVED_OPTIONS) {
    if (removed.scope !== 'global' || !root.has(removed.key)) continue;
    if (removed.migrate.kind === 'rename') renameKey(root, removed.key, removed.migrate.to, changes);
    else if (removed.key === 'tracing_debug') migrateTracingDebug(root, changes);
    else if (removed.key === 'policy_file') inlinePolicyFile(doc, root, readText, changes);
    else {
      root.delete(removed.key);
      changes.push({ path: removed.key, message: `removed ${removed.key}: ${removed.fix}` });
    }
  }
  for (const [from, to] of SPELLINGS) if (root.has(from)) renameKey(root, from, to, changes);
  migrateServices(root, changes);
  mergePolicyIntoRoutes(root, changes);
  const routes = root.get('routes', true);
  if (isSeq(routes)) migrateRoutes(doc, routes, 'routes', changes);
  return changes;
}

/** Renames a key in place; when the new key is already set with another value, leaves both for a person. */
function renameKey(root: YAMLMap, from: string, to: string, changes: MigrationChange[]): void {
  if (root.has(to)) {
    if (isDeepStrictEqual(toJs(root.get(from, true)), toJs(root.get(to, true)))) {
      root.delete(from);
      changes.push({ path: from, message: `removed ${from}: ${to} is already set to the same value` });
    } else {
      changes.push({
        path: from,
        message: `both ${from} and ${to} are set with different values; merge them into ${to} by hand`,
        manual: true,
      });
    }
    return;
  }
  const pair = root.items.find((item) => isScalar(item.key) && item.key.value === from);
  if (pair !== undefined && isScalar(pair.key)) pair.key.value = to;
  changes.push({ path: from, message: `renamed ${from} to ${to}` });
}

function toJs(node: unknown): unknown {
  return node !== null && typeof node === 'object' && 'toJSON' in node
    ? (node as { toJSON(): unknown }).toJSON()
    : node;
}

function migrateTracingDebug(root: YAMLMap, changes: MigrationChange[]): void {
  const enabled = ['true', '1', 'yes', 'on'].includes(
    String(toJs(root.get('tracing_debug', true)))
      .trim()
      .toLowerCase(),
  );
  if (enabled && !root.has('tracing_sampling_rate')) {
    const pair = root.items.find((item) => isScalar(item.key) && item.key.value === 'tracing_debug');
    if (pair !== undefined && isScalar(pair.key)) pair.key.value = 'tracing_sampling_rate';
    root.set('tracing_sampling_rate', 1);
    changes.push({
      path: 'tracing_debug',
      message: 'replaced tracing_debug: true with tracing_sampling_rate: 1',
    });
  } else {
    root.delete('tracing_debug');
    changes.push({
      path: 'tracing_debug',
      message: 'removed tracing_debug (tracing_sampling_rate sets how much is traced)',
    });
  }
}

function inlinePolicyFile(
  doc: Document,
  root: YAMLMap,
  readText: ReadText,
  changes: MigrationChange[],
): void {
  const file = String(toJs(root.get('policy_file', true)));
  let routes: unknown;
  try {
    routes = parseYaml(readText(file));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'it does not parse';
    changes.push({
      path: 'policy_file',
      message: `cannot inline ${file} (${reason}); move its routes under routes by hand`,
      manual: true,
    });
    return;
  }
  if (!Array.isArray(routes)) {
    changes.push({
      path: 'policy_file',
      message: `${file} does not hold a list of routes; move them under routes by hand`,
      manual: true,
    });
    return;
  }
  root.delete('policy_file');
  const existing = root.get('routes', true);
  const inlined = doc.createNode(routes) as YAMLSeq;
  if (isSeq(existing)) existing.items.unshift(...inlined.items);
  else root.set('routes', inlined);
  changes.push({
    path: 'policy_file',
    message: `inlined the ${routes.length} routes of ${file} under routes`,
  });
}

function migrateServices(root: YAMLMap, changes: MigrationChange[]): void {
  const services = root.get('services', true);
  if (!isScalar(services) || typeof services.value !== 'string') return;
  const names = services.value.split(',').map((name) => name.trim());
  if (!names.some((name) => name.toLowerCase() === 'cache')) return;
  services.value = names.map((name) => (name.toLowerCase() === 'cache' ? 'databroker' : name)).join(',');
  changes.push({ path: 'services', message: 'renamed the cache service to databroker' });
}

/** `policy` (the older name of routes) becomes `routes`; its routes go first, as they load first. */
function mergePolicyIntoRoutes(root: YAMLMap, changes: MigrationChange[]): void {
  const policy = root.get('policy', true);
  if (policy === undefined) return;
  const routes = root.get('routes', true);
  if (routes === undefined) {
    const pair = root.items.find((item) => isScalar(item.key) && item.key.value === 'policy');
    if (pair !== undefined && isScalar(pair.key)) pair.key.value = 'routes';
    changes.push({ path: 'policy', message: 'renamed policy to routes' });
  } else if (isSeq(policy) && isSeq(routes)) {
    routes.items.unshift(...policy.items);
    root.delete('policy');
    changes.push({
      path: 'policy',
      message: `moved the ${policy.items.length} routes under policy to the front of routes`,
    });
  } else {
    changes.push({
      path: 'policy',
      message: 'policy and routes are both set but not both lists; merge them by hand',
      manual: true,
    });
  }
}
