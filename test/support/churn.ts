/**
 * Config churn for the live-change tests and the churn benchmark (issue 28): a small model of the
 * routes a config holds, every kind of change the issue lists as a pure step on that model, and
 * the route objects a config file gets from it. Routes under load ("loaded") keep what they match
 * for the whole run, so a request valid before a change is valid after it; only what Portcullis may
 * change in place (upstreams, weights, health checks, outlier detection, policy, headers, timeouts,
 * order) moves. Extra routes come and go. The certificate is the caller's (a file it replaces).
 */

/** Every kind of live change of issue 28, item 2. */
export const CHANGE_KINDS = [
  'route added',
  'route removed',
  'routes reordered',
  'to added',
  'to removed',
  'to re-weighted',
  'health check changed',
  'outlier detection changed',
  'policy changed',
  'certificate replaced',
  'request headers changed',
  'timeout changed',
] as const;

/** One kind of change. */
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** One upstream of a loaded route: an index into the caller's upstream URLs, and its weight. */
export interface ChurnTarget {
  readonly upstream: number;
  readonly weight: number;
}

/** A route under load: its host never changes; everything else may. */
export interface LoadedRoute {
  readonly host: string;
  /** Protected routes need the load's session (ada@example.com); public ones need nothing. */
  readonly protected: boolean;
  readonly targets: readonly ChurnTarget[];
  /** Index into the health-check variants (0: none). */
  readonly healthCheck: number;
  readonly outlierDetection: number;
  /** Index into the policy variants (protected routes only; every variant allows the session). */
  readonly policy: number;
  readonly headers: number;
  readonly timeoutS: number;
}

/** The routes of one config: the loaded ones, the extras, and the order they are written in. */
export interface ChurnState {
  readonly loaded: readonly LoadedRoute[];
  /** Hosts of the extra (public) routes present now. */
  readonly extras: readonly string[];
  /** Every extra route ever added, so each added host is new. */
  readonly extrasMade: number;
  /** A rotation of the written route list: reordering changes it. */
  readonly rotation: number;
  /** How many times the certificate was replaced (the caller replaces the file). */
  readonly certificates: number;
}

/** The session's email: every policy variant allows it. */
export const CHURN_USER = 'ada@example.com';

/** The policy variants for a session of `user` (an address at example.com): each allows it. */
function policies(user: string): readonly Record<string, unknown>[] {
  return [
    { allowed_users: [user] },
    { allowed_domains: ['example.com'] },
    { policy: { allow: { or: [{ email: { is: user } }] } } },
    { policy: { allow: { and: [{ domain: { is: 'example.com' } }, { http_method: { is: 'GET' } }] } } },
  ];
}

/** How many policy variants `policies` gives. */
const POLICY_VARIANTS = 4;

const HEALTH_CHECKS: readonly (Record<string, unknown>[] | undefined)[] = [
  undefined,
  [
    {
      timeout: '1s',
      interval: '10s',
      unhealthy_threshold: 3,
      healthy_threshold: 1,
      http_health_check: { path: '/healthz' },
    },
  ],
  [
    {
      timeout: '2s',
      interval: '15s',
      unhealthy_threshold: 2,
      healthy_threshold: 1,
      http_health_check: { path: '/healthz' },
    },
  ],
];

const OUTLIER_DETECTIONS: readonly (Record<string, unknown> | undefined)[] = [
  undefined,
  { consecutive_5xx: 5, interval: '10s', base_ejection_time: '30s', max_ejection_percent: 50 },
  { consecutive_5xx: 7, interval: '5s', base_ejection_time: '15s', max_ejection_percent: 30 },
];

/** Hosts of the loaded routes: `public-<i>.churn.test` and `protected-<i>.churn.test`. */
export function loadedHost(kind: 'public' | 'protected', index: number): string {
  return `${kind}-${index}.churn.test`;
}

/** Host of extra route number `index`. */
export function extraHost(index: number): string {
  return `extra-${index}.churn.test`;
}

/**
 * The first state: `publicRoutes` public and `protectedRoutes` protected loaded routes, each to
 * upstreams 0 and 1 (weights 3 and 1), and two extra routes. `upstreams` is how many upstream
 * URLs the caller has (at least 3, so a `to` can be added while two are in use).
 */
export function initialChurnState(options: {
  readonly publicRoutes: number;
  readonly protectedRoutes: number;
}): ChurnState {
  const route = (host: string, isProtected: boolean): LoadedRoute => ({
    host,
    protected: isProtected,
    targets: [
      { upstream: 0, weight: 3 },
      { upstream: 1, weight: 1 },
    ],
    healthCheck: 0,
    outlierDetection: 0,
    policy: 0,
    headers: 0,
    timeoutS: 30,
  });
  return {
    loaded: [
      ...Array.from({ length: options.publicRoutes }, (_, i) => route(loadedHost('public', i), false)),
      ...Array.from({ length: options.protectedRoutes }, (_, i) => route(loadedHost('protected', i), true)),
    ],
    extras: [extraHost(0), extraHost(1)],
    extrasMade: 2,
    rotation: 0,
    certificates: 0,
  };
}

/** The kind of change number `index`: every kind in turn, so a run of 12n changes has n of each. */
export function changeKindAt(index: number, options: { readonly certificate: boolean }): ChangeKind {
  const kinds = options.certificate ? CHANGE_KINDS : CHANGE_KINDS.filter((k) => k !== 'certificate replaced');
  return kinds[index % kinds.length] as ChangeKind;
}

/**
 * `state` after one change of `kind`, `random` (in [0, 1)) choosing which route and how: a pure
 * step, so a seeded run replays exactly. A removal with nothing to remove adds instead (the
 * returned kind says which happened); a `to` removal keeps at least one upstream.
 */
export function applyChange(
  state: ChurnState,
  kind: ChangeKind,
  random: () => number,
  upstreams: number,
): { readonly state: ChurnState; readonly kind: ChangeKind } {
  const pick = <T>(items: readonly T[]): number => Math.floor(random() * items.length);
  const at = pick(state.loaded);
  const edit = (change: (route: LoadedRoute) => LoadedRoute): ChurnState => ({
    ...state,
    loaded: state.loaded.map((route, i) => (i === at ? change(route) : route)),
  });
  const next = (value: number, count: number): number =>
    (value + 1 + Math.floor(random() * (count - 1))) % count;
  switch (kind) {
    case 'route added':
      return {
        kind,
        state: {
          ...state,
          extras: [...state.extras, extraHost(state.extrasMade)],
          extrasMade: state.extrasMade + 1,
        },
      };
    case 'route removed': {
      if (state.extras.length === 0) return applyChange(state, 'route added', random, upstreams);
      const gone = pick(state.extras);
      return { kind, state: { ...state, extras: state.extras.filter((_, i) => i !== gone) } };
    }
    case 'routes reordered':
      return { kind, state: { ...state, rotation: state.rotation + 1 } };
    case 'to added': {
      const route = state.loaded[at] as LoadedRoute;
      const unused = Array.from({ length: upstreams }, (_, i) => i).filter(
        (i) => !route.targets.some((t) => t.upstream === i),
      );
      if (unused.length === 0) return applyChange(state, 'to removed', random, upstreams);
      const upstream = unused[pick(unused)] as number;
      return { kind, state: edit((r) => ({ ...r, targets: [...r.targets, { upstream, weight: 1 }] })) };
    }
    case 'to removed': {
      const route = state.loaded[at] as LoadedRoute;
      if (route.targets.length <= 1) return applyChange(state, 'to added', random, upstreams);
      const gone = pick(route.targets);
      return { kind, state: edit((r) => ({ ...r, targets: r.targets.filter((_, i) => i !== gone) })) };
    }
    case 'to re-weighted':
      return {
        kind,
        state: edit((r) => ({
          ...r,
          // A flip such as 3:1 -> 1:3, the change the issue saw drop requests.
          targets: r.targets.map((t, i) => ({ ...t, weight: 1 + ((t.weight + i + 1) % 4) })),
        })),
      };
    case 'health check changed':
      return { kind, state: edit((r) => ({ ...r, healthCheck: next(r.healthCheck, HEALTH_CHECKS.length) })) };
    case 'outlier detection changed':
      return {
        kind,
        state: edit((r) => ({ ...r, outlierDetection: next(r.outlierDetection, OUTLIER_DETECTIONS.length) })),
      };
    case 'policy changed': {
      const guarded = state.loaded.map((r, i) => (r.protected ? i : -1)).filter((i) => i >= 0);
      if (guarded.length === 0) return applyChange(state, 'request headers changed', random, upstreams);
      const index = guarded[pick(guarded)] as number;
      return {
        kind,
        state: {
          ...state,
          loaded: state.loaded.map((r, i) =>
            i === index ? { ...r, policy: next(r.policy, POLICY_VARIANTS) } : r,
          ),
        },
      };
    }
    case 'certificate replaced':
      return { kind, state: { ...state, certificates: state.certificates + 1 } };
    case 'request headers changed':
      return { kind, state: edit((r) => ({ ...r, headers: r.headers + 1 })) };
    case 'timeout changed':
      return { kind, state: edit((r) => ({ ...r, timeoutS: r.timeoutS === 30 ? 20 : r.timeoutS + 5 })) };
  }
}

/**
 * The `routes` of a config for `state`: each loaded route to `upstreamUrls` by its targets
 * (`url,weight`), then the extras to `upstreamUrls[0]`, the whole list rotated by `state.rotation`.
 * Protected routes allow `user` (default CHURN_USER; an address at example.com).
 */
export function churnRoutes(
  state: ChurnState,
  upstreamUrls: readonly string[],
  user: string = CHURN_USER,
): Record<string, unknown>[] {
  const variants = policies(user);
  const loaded = state.loaded.map((route) => {
    const healthChecks = HEALTH_CHECKS[route.healthCheck];
    const outlier = OUTLIER_DETECTIONS[route.outlierDetection];
    return {
      from: `https://${route.host}`,
      to: route.targets.map((t) => `${upstreamUrls[t.upstream] ?? ''},${t.weight}`),
      ...(route.protected ? variants[route.policy] : { allow_public_unauthenticated_access: true }),
      ...(healthChecks === undefined ? {} : { health_checks: healthChecks }),
      ...(outlier === undefined ? {} : { outlier_detection: outlier }),
      set_request_headers: { 'X-Churn': String(route.headers) },
      timeout: `${route.timeoutS}s`,
    };
  });
  const extras = state.extras.map((host) => ({
    from: `https://${host}`,
    to: upstreamUrls[0] ?? '',
    allow_public_unauthenticated_access: true,
  }));
  const all = [...loaded, ...extras];
  const shift = state.rotation % all.length;
  return [...all.slice(shift), ...all.slice(0, shift)];
}

/** What the last change did to the extras: the host added or removed, if any. */
export function extrasDiff(
  before: ChurnState,
  after: ChurnState,
): { readonly added: readonly string[]; readonly removed: readonly string[] } {
  return {
    added: after.extras.filter((host) => !before.extras.includes(host)),
    removed: before.extras.filter((host) => !after.extras.includes(host)),
  };
}
