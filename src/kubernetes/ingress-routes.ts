/**
 * Ingresses of Portcullis's IngressClass -> route candidates and listener certificates (pure).
 *
 * - Class: an Ingress is ours when `spec.ingressClassName` (or the older annotation
 *   `kubernetes.io/ingress.class`) names an IngressClass whose controller is
 *   INGRESS_CONTROLLER, or when it names none and such a class is marked the default. Others are
 *   ignored without a word: they belong to another controller.
 * - Hosts: each rule's host becomes `from: https://<host>` (a `*.` wildcard as is; no host means
 *   every host, `*`). The scheme of `from` matches nothing: the listener serves HTTPS, or plain
 *   HTTP with `insecure_server`, for every route alike. Portcullis's `*.example.com` also matches
 *   deeper names (`a.b.example.com`), where Kubernetes's matches one label.
 * - Paths: `Exact` -> `path`; `Prefix` element-wise (route-assembly.ts); `ImplementationSpecific`
 *   as `Prefix`. `spec.defaultBackend` serves every host (`*`, prefix `/`), and under each of the
 *   Ingress's own hosts what no rule path matches, unless a real path takes `/` there.
 * - Backends: a Service port by number or name, followed through EndpointSlices
 *   (service-backends.ts); none ready -> `to: []`, the route answers 503 (destinations.ts).
 * - TLS: each `spec.tls[].secretName` becomes a listener certificate (tls-secrets.ts).
 * - Options: the `portcullis.dev/*` annotations apply to every route of the Ingress (annotations.ts).
 * - Sharing: `portcullis.dev/allowed_namespaces` names the namespaces that may add paths on the
 *   Ingress's hosts when its namespace owns them (host-ownership.ts); each candidate carries it.
 */
import { readAnnotations, type AnnotatedOptions } from './annotations.js';
import { destinationUrls } from './destinations.js';
import {
  IS_DEFAULT_CLASS_ANNOTATION,
  LEGACY_CLASS_ANNOTATION,
  type Ingress,
  type IngressBackend,
  type IngressClass,
} from './objects.js';
import { refOf, type ObjectProblem, type ObjectRef } from './object-problems.js';
import { oldestFirst, rankOf, type PathMatch, type RouteCandidate } from './route-assembly.js';
import { resolveServiceBackend, type ServiceIndex } from './service-backends.js';
import type { ReadSecret } from './secret-refs.js';
import { addTlsSecret, type CertificateSet } from './tls-secrets.js';
import { hostProblem } from './hosts.js';
import { readAllowedNamespaces } from './host-ownership.js';

/** The IngressClass `spec.controller` value that makes a class Portcullis's. */
export const INGRESS_CONTROLLER = 'portcullis.dev/ingress-controller';

/** What the Ingress translation reads. */
export interface IngressInput {
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  readonly services: ServiceIndex;
  readonly secrets: ReadSecret;
}

/** The Ingresses' route candidates; their certificates go to `certificates`. */
export interface IngressOutput {
  readonly candidates: readonly RouteCandidate[];
  readonly problems: readonly ObjectProblem[];
}

/** Translates the Ingresses of our class (see the module comment); certificates are added to `certificates`. */
export function ingressCandidates(input: IngressInput, certificates: CertificateSet): IngressOutput {
  const isOurs = classFilter(input.ingressClasses);
  const candidates: RouteCandidate[] = [];
  const problems: ObjectProblem[] = [];
  for (const ingress of oldestFirst(input.ingresses)) {
    if (!isOurs(ingress)) continue;
    const translated = translateIngress(ingress, input, certificates);
    candidates.push(...translated.candidates);
    problems.push(...translated.problems);
  }
  return { candidates, problems };
}

/** Whether an Ingress belongs to one of our IngressClasses (see the module comment). */
export function classFilter(classes: readonly IngressClass[]): (ingress: Ingress) => boolean {
  const ours = classes.filter((ingressClass) => ingressClass.spec?.controller === INGRESS_CONTROLLER);
  const names = new Set(ours.map((ingressClass) => ingressClass.metadata.name));
  const isDefault = ours.some(
    (ingressClass) => ingressClass.metadata.annotations?.[IS_DEFAULT_CLASS_ANNOTATION] === 'true',
  );
  return (ingress) => {
    const named = ingress.spec?.ingressClassName ?? ingress.metadata.annotations?.[LEGACY_CLASS_ANNOTATION];
    return named === undefined ? isDefault : names.has(named);
  };
}

/** Shared per-Ingress state while its rules are read. */
interface IngressContext {
  readonly ingress: Ingress;
  readonly object: ObjectRef;
  readonly namespace: string;
  readonly annotated: AnnotatedOptions;
  /** What `portcullis.dev/allowed_namespaces` names (none when unset). */
  readonly sharesHostWith: readonly string[];
  readonly input: IngressInput;
  readonly problems: ObjectProblem[];
}

function translateIngress(
  ingress: Ingress,
  input: IngressInput,
  certificates: CertificateSet,
): IngressOutput {
  const object = refOf('Ingress', ingress.metadata);
  const namespace = ingress.metadata.namespace ?? 'default';
  const annotated = readAnnotations(object, ingress.metadata.annotations);
  const shared = readAllowedNamespaces(object, ingress.metadata.annotations);
  const problems: ObjectProblem[] = [...annotated.problems, ...shared.problems];
  const sharesHostWith = shared.namespaces;
  const context: IngressContext = { ingress, object, namespace, annotated, sharesHostWith, input, problems };
  (ingress.spec?.tls ?? []).forEach((tls, index) => {
    if (tls.secretName === undefined) return;
    const problem = addTlsSecret(
      certificates,
      input.secrets,
      { namespace, name: tls.secretName },
      object,
      `spec.tls[${index}].secretName`,
    );
    if (problem !== undefined) problems.push(problem);
  });
  const candidates: RouteCandidate[] = [];
  const hosts: string[] = [];
  (ingress.spec?.rules ?? []).forEach((rule, ruleIndex) => {
    const host = (rule.host ?? '*').toLowerCase();
    const invalid = rule.host === undefined ? undefined : hostProblem(host);
    if (invalid !== undefined) {
      problems.push({ object, where: `spec.rules[${ruleIndex}].host`, message: invalid });
      return;
    }
    hosts.push(host);
    (rule.http?.paths ?? []).forEach((path, pathIndex) => {
      const where = `spec.rules[${ruleIndex}].http.paths[${pathIndex}]`;
      const value = path.path ?? '/';
      if (!value.startsWith('/')) {
        problems.push({
          object,
          where: `${where}.path`,
          message: `must start with "/", got ${JSON.stringify(value)}`,
        });
        return;
      }
      const match: PathMatch = { kind: path.pathType === 'Exact' ? 'Exact' : 'Prefix', value };
      const destination = destinationFor(context, path.backend, `${where}.backend`);
      if (destination === undefined) return;
      const keys = { ...destination.keys, from: `spec.rules[${ruleIndex}].host`, path: where, prefix: where };
      candidates.push(candidate(context, host, match, { ...destination, keys }, where, candidates.length));
    });
  });
  const fallback = ingress.spec?.defaultBackend;
  const destination =
    fallback === undefined ? undefined : destinationFor(context, fallback, 'spec.defaultBackend');
  if (destination !== undefined) {
    const keys = { ...destination.keys, from: 'spec.defaultBackend', prefix: 'spec.defaultBackend' };
    for (const host of ['*', ...new Set(hosts)]) {
      const made = candidate(
        context,
        host,
        { kind: 'Prefix', value: '/' },
        { ...destination, keys },
        'spec.defaultBackend',
        candidates.length,
      );
      candidates.push(host === '*' ? made : { ...made, fallback: true });
    }
  }
  return { candidates, problems };
}

/** A backend's route keys (`to` and the annotations) and where each came from. */
interface Destination {
  readonly options: Readonly<Record<string, unknown>>;
  readonly keys: Readonly<Record<string, string>>;
}

/** The destination of `backend` (at `backendWhere`), or undefined with a problem when it has none. */
function destinationFor(
  context: IngressContext,
  backend: IngressBackend,
  backendWhere: string,
): Destination | undefined {
  const { object, namespace, annotated, input, problems } = context;
  if (backend.service === undefined) {
    problems.push({
      object,
      where: backendWhere,
      message: `only Service backends are supported${backend.resource === undefined ? '' : ` (got a ${backend.resource.kind} resource)`}`,
    });
    return undefined;
  }
  const resolved = resolveServiceBackend(
    input.services,
    namespace,
    backend.service.name,
    backend.service.port,
  );
  if (resolved.kind === 'problem') {
    problems.push({ object, where: backendWhere, message: resolved.message });
    return undefined;
  }
  return {
    options: { to: destinationUrls([{ urls: resolved.urls, weight: 1 }]), ...annotated.values },
    keys: { ...annotated.sources, to: `${backendWhere} (Service ${namespace}/${backend.service.name})` },
  };
}

/** One host and path of an Ingress with its destination. */
function candidate(
  context: IngressContext,
  host: string,
  match: PathMatch,
  destination: Destination,
  where: string,
  place: number,
): RouteCandidate {
  return {
    host,
    match,
    options: destination.options,
    origin: { object: context.object, where, keys: destination.keys },
    rank: rankOf(context.object, context.ingress.metadata.creationTimestamp, place),
    ...(context.sharesHostWith.length === 0 ? {} : { sharesHostWith: context.sharesHostWith }),
  };
}
