/**
 * Gateway API HTTPRoutes attached to Portcullis's Gateways -> route candidates (pure).
 *
 * - Attachment: a parentRef to one of our Gateways (gateway-listeners.ts), narrowed by
 *   `sectionName` and `port`, to listeners that allow HTTPRoutes from the route's namespace. Refs
 *   to other controllers' Gateways are ignored. The route's hostnames (every host when none)
 *   intersect each listener's hostname; no common host is a problem.
 * - Matches: `Exact` -> `path`, `PathPrefix` element-wise as an Ingress `Prefix`,
 *   `RegularExpression` -> `regex` (RE2, checked as Envoy compiles it). Header, query parameter
 *   and method matches are problems: Portcullis routes match on host and path only, and dropping
 *   such a match would send requests to a backend the author did not mean.
 * - Backends: Services in the route's namespace (a cross-namespace backendRef is a problem:
 *   ReferenceGrant is not read, and refusing is the safe default), each with its weight (default
 *   1, 0 takes no traffic), split per endpoint as `to` weights (destinations.ts). A backend with no
 *   ready endpoints takes no share; none at all is `to: []` (503). Per-backend filters are problems.
 * - Filters: httproute-filters.ts.
 * - Policy and per-route options: the same `portcullis.dev/*` annotations as an Ingress, on the
 *   HTTPRoute (annotations.ts). Chosen over a policy resource because one table then serves
 *   Ingress and HTTPRoute alike, there is no second CRD to install, version and give status, and
 *   the HTTPRoute is the unit a policy applies to; a Gateway API policy-attachment resource can
 *   be added later beside annotations without breaking them.
 */
import { readAnnotations, type AnnotatedOptions } from './annotations.js';
import { destinationUrls, type WeightedBackend } from './destinations.js';
import type { OpenListener } from './gateway-listeners.js';
import { hostProblem, intersectHosts } from './hosts.js';
import { readFilters } from './httproute-filters.js';
import type { HTTPRoute, HTTPRouteMatch, HTTPRouteRule, ParentReference } from './objects.js';
import { refOf, type ObjectProblem, type ObjectRef } from './object-problems.js';
import { oldestFirst, rankOf, type PathMatch, type RouteCandidate } from './route-assembly.js';
import { resolveServiceBackend, type ServiceIndex } from './service-backends.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** What the HTTPRoute translation reads: our Gateways' open listeners, the routes, the Services. */
export interface HttpRouteInput {
  readonly gateways: ReadonlyMap<string, readonly OpenListener[]>;
  readonly httpRoutes: readonly HTTPRoute[];
  readonly services: ServiceIndex;
}

/** The HTTPRoutes' route candidates and problems. */
export interface HttpRouteOutput {
  readonly candidates: readonly RouteCandidate[];
  readonly problems: readonly ObjectProblem[];
}

/** Translates the HTTPRoutes attached to our Gateways (see the module comment). */
export function httpRouteCandidates(input: HttpRouteInput): HttpRouteOutput {
  const candidates: RouteCandidate[] = [];
  const problems: ObjectProblem[] = [];
  for (const route of oldestFirst(input.httpRoutes)) {
    const object = refOf('HTTPRoute', route.metadata);
    const namespace = route.metadata.namespace ?? 'default';
    const listeners = (route.spec.parentRefs ?? []).flatMap((parent, index) =>
      attachedListeners(input.gateways, parent, namespace).map((listener) => ({ listener, index })),
    );
    if (listeners.length === 0) {
      const ours = (route.spec.parentRefs ?? []).some((parent) =>
        input.gateways.has(parentKey(parent, namespace)),
      );
      if (ours)
        problems.push({
          object,
          where: 'spec.parentRefs',
          message: 'no listener of the Gateway accepts this route (sectionName, port, allowedRoutes)',
        });
      continue;
    }
    const refused = (route.spec.hostnames ?? []).flatMap((name, index) => {
      const problem = hostProblem(name.toLowerCase());
      return problem === undefined ? [] : [{ object, where: `spec.hostnames[${index}]`, message: problem }];
    });
    if (refused.length > 0) {
      problems.push(...refused);
      continue;
    }
    const hosts = new Set<string>();
    for (const { listener } of listeners)
      for (const name of route.spec.hostnames ?? ['*']) {
        const host = intersectHosts(listener.hostname, name.toLowerCase());
        if (host !== undefined) hosts.add(host);
      }
    if (hosts.size === 0) {
      problems.push({
        object,
        where: 'spec.hostnames',
        message: 'no hostname matches a listener hostname of the Gateway',
      });
      continue;
    }
    const context: RouteContext = {
      route,
      object,
      namespace,
      annotated: readAnnotations(object, route.metadata.annotations),
      services: input.services,
      problems,
    };
    problems.push(...context.annotated.problems);
    (route.spec.rules ?? []).forEach((rule, ruleIndex) => {
      candidates.push(...ruleCandidates(context, rule, ruleIndex, [...hosts].sort(), candidates.length));
    });
  }
  return { candidates, problems };
}

function parentKey(parent: ParentReference, namespace: string): string {
  return `${parent.namespace ?? namespace}/${parent.name}`;
}

/** The listeners of our Gateway that `parent` attaches the route to (none for another controller's Gateway). */
function attachedListeners(
  gateways: ReadonlyMap<string, readonly OpenListener[]>,
  parent: ParentReference,
  namespace: string,
): OpenListener[] {
  if ((parent.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (parent.kind ?? 'Gateway') !== 'Gateway')
    return [];
  const listeners = gateways.get(parentKey(parent, namespace)) ?? [];
  return listeners.filter(
    (listener) =>
      (parent.sectionName === undefined || parent.sectionName === listener.name) &&
      (parent.port === undefined || parent.port === listener.port) &&
      listener.allowsHttpRoute &&
      (listener.from === 'All' || listener.gateway.namespace === namespace),
  );
}

interface RouteContext {
  readonly route: HTTPRoute;
  readonly object: ObjectRef;
  readonly namespace: string;
  readonly annotated: AnnotatedOptions;
  readonly services: ServiceIndex;
  readonly problems: ObjectProblem[];
}

/** The candidates of one rule: one per host and match, all with the rule's destination and filters. */
function ruleCandidates(
  context: RouteContext,
  rule: HTTPRouteRule,
  ruleIndex: number,
  hosts: readonly string[],
  placed: number,
): RouteCandidate[] {
  const { object, problems } = context;
  const where = `spec.rules[${ruleIndex}]`;
  const before = problems.length;
  const filters = readFilters(rule.filters ?? [], `${where}.filters`);
  for (const problem of filters.problems) problems.push({ object, ...problem });
  const filterKeys = [
    ...Object.keys(filters.keys),
    ...(filters.prefixReplacement === undefined ? [] : ['prefix_rewrite']),
  ];
  for (const key of filterKeys.filter((name) => context.annotated.values[name] !== undefined))
    problems.push({
      object,
      where: context.annotated.sources[key] ?? `${where}.filters`,
      message: `${key} is also set by a filter of ${where}; keep one of them`,
    });
  const matches = (rule.matches ?? [{}]).map((match, index) =>
    readMatch(context, match, `${where}.matches[${index}]`),
  );
  if (filters.keys.redirect !== undefined && (rule.backendRefs ?? []).length > 0)
    problems.push({
      object,
      where: `${where}.backendRefs`,
      message: 'a rule with a RequestRedirect filter answers with the redirect; remove its backendRefs',
    });
  const destination =
    filters.keys.redirect !== undefined
      ? { ...context.annotated.values, ...filters.keys }
      : { ...ruleDestination(context, rule, where, context.annotated.values), ...filters.keys };
  if (problems.length > before) return [];
  const keys: Record<string, string> = { ...context.annotated.sources };
  for (const key of Object.keys(filters.keys)) keys[key] = `${where}.filters`;
  keys.to = `${where}.backendRefs`;
  const candidates: RouteCandidate[] = [];
  for (const host of hosts)
    matches.forEach((match, index) => {
      if (match === undefined) return;
      const at = `${where}.matches[${index}]`;
      candidates.push({
        host,
        match,
        options: destination,
        origin: {
          object,
          where: at,
          keys: { ...keys, from: 'spec.hostnames', path: at, prefix: at, regex: at },
        },
        rank: rankOf(object, context.route.metadata.creationTimestamp, placed + candidates.length),
        ...(filters.prefixReplacement === undefined ? {} : { prefixReplacement: filters.prefixReplacement }),
      });
    });
  return candidates;
}

/** A match's path; header, query and method matches are problems (see the module comment). */
function readMatch(context: RouteContext, match: HTTPRouteMatch, where: string): PathMatch | undefined {
  const unsupported = (['headers', 'queryParams', 'method'] as const).filter((field) =>
    field === 'method' ? match.method !== undefined : (match[field] ?? []).length > 0,
  );
  for (const field of unsupported)
    context.problems.push({
      object: context.object,
      where: `${where}.${field}`,
      message: `${field} matches are not supported: Portcullis routes match on host and path only`,
    });
  if (unsupported.length > 0) return undefined;
  const value = match.path?.value ?? '/';
  const type = match.path?.type ?? 'PathPrefix';
  if (type !== 'RegularExpression' && !value.startsWith('/')) {
    context.problems.push({
      object: context.object,
      where: `${where}.path.value`,
      message: `must start with "/", got ${JSON.stringify(value)}`,
    });
    return undefined;
  }
  return { kind: type === 'PathPrefix' ? 'Prefix' : type, value };
}

/** The rule's `to` from its Service backendRefs with their weights (`[]`: none ready, the route answers 503). */
function ruleDestination(
  context: RouteContext,
  rule: HTTPRouteRule,
  where: string,
  options: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const { object, namespace, problems } = context;
  const backends: WeightedBackend[] = [];
  (rule.backendRefs ?? []).forEach((ref, index) => {
    const at = `${where}.backendRefs[${index}]`;
    const problem = (message: string): void => {
      problems.push({ object, where: at, message });
    };
    if ((ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service')
      return problem(`only Services are supported as backends (got ${ref.group ?? ''}/${ref.kind ?? ''})`);
    if ((ref.namespace ?? namespace) !== namespace)
      return problem(
        `Service ${ref.namespace}/${ref.name} is in another namespace; cross-namespace backends are refused (ReferenceGrant is not supported)`,
      );
    if ((ref.filters ?? []).length > 0)
      return problem('per-backend filters are not supported; put them on the rule');
    if (ref.port === undefined) return problem('port is required for a Service backend');
    const resolved = resolveServiceBackend(context.services, namespace, ref.name, { number: ref.port });
    if (resolved.kind === 'problem') return problem(resolved.message);
    backends.push({ urls: resolved.urls, weight: ref.weight ?? 1 });
  });
  return { to: destinationUrls(backends), ...options };
}
