import { isMap, isScalar, isSeq, type Document, type YAMLMap, YAMLSeq } from 'yaml';

/** One thing `config migrate` did, or (with `manual`) could not do and leaves to the user. */
export interface MigrationChange {
  readonly path: string;
  readonly message: string;
  readonly manual?: true;
}

/**
 * Route-level migrations on a YAML document: `allowed_groups` becomes an allow rule of
 * `claim/groups` criteria appended to the route's policy, and every `groups` criterion becomes
 * `claim/groups`. Allow rules are OR-ed with each other and with the shortcuts, so appending a
 * rule keeps who is let in.
 */
export function migrateRoutes(
  doc: Document,
  routes: YAMLSeq,
  listKey: string,
  changes: MigrationChange[],
): void {
  routes.items.forEach((route, index) => {
    if (!isMap(route)) return;
    const path = `${listKey}[${index}]`;
    const policy = route.get('policy', true);
    if (policy !== undefined) renameGroupsCriteria(policy, `${path}.policy`, changes);
    migrateAllowedGroups(doc, route, path, changes);
  });
}

function migrateAllowedGroups(doc: Document, route: YAMLMap, path: string, changes: MigrationChange[]): void {
  const node = route.get('allowed_groups', true);
  if (node === undefined) return;
  const raw: unknown = isSeq(node) || isScalar(node) ? node.toJSON() : undefined;
  const groups = (Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [])
    .map((group) => String(group).trim())
    .filter((group) => group !== '');
  route.delete('allowed_groups');
  if (groups.length === 0) {
    changes.push({ path: `${path}.allowed_groups`, message: 'removed the empty allowed_groups' });
    return;
  }
  const rule = doc.createNode({ allow: { or: groups.map((group) => ({ 'claim/groups': group })) } });
  const policy = route.get('policy', true);
  if (policy === undefined || (isScalar(policy) && policy.value === null)) {
    const list = new YAMLSeq();
    list.items.push(rule);
    route.set('policy', list);
  } else if (isSeq(policy)) {
    policy.items.push(rule);
  } else {
    const list = new YAMLSeq();
    list.items.push(policy, rule);
    route.set('policy', list);
  }
  changes.push({
    path: `${path}.allowed_groups`,
    message: `replaced allowed_groups with a policy rule allowing claim/groups ${groups.join(', ')}; check that your identity provider sends these values in the groups claim (directory group IDs may differ)`,
  });
}

/** Renames `groups` criterion keys to `claim/groups` anywhere in a policy (rules, actions, blocks). */
function renameGroupsCriteria(node: unknown, path: string, changes: MigrationChange[]): void {
  if (isSeq(node)) {
    node.items.forEach((item, index) => renameGroupsCriteria(item, `${path}[${index}]`, changes));
    return;
  }
  if (!isMap(node)) return;
  for (const pair of node.items) {
    if (isScalar(pair.key) && pair.key.value === 'groups' && node.items.length === 1) {
      pair.key.value = 'claim/groups';
      changes.push({ path, message: 'renamed the groups criterion to claim/groups' });
    } else if (isScalar(pair.key)) {
      renameGroupsCriteria(pair.value, `${path}.${String(pair.key.value)}`, changes);
    }
  }
}
