/**
 * Every Kubernetes route source at once (pure): Ingresses of our IngressClass and HTTPRoutes on
 * our Gateways -> the `routes` and `certificates` of a config document, the same shapes a file
 * gives, ordered and de-conflicted together (route-assembly.ts), with each entry's origin so that
 * parseConfig's and translate's problems map back to the object (route-provenance.ts).
 *
 * `problems` mean the objects as they stand cannot be served as their authors wrote them (a bad
 * annotation, a missing Secret or Service): the caller must not publish this build; it replaces
 * each object named by its last accepted version or leaves it out (last-accepted.ts), naming each
 * object in an Event. `skipped` are paths left out by rule (a newer object claiming a path an older
 * one serves, or a host another namespace owns, host-ownership.ts), and certificates naming
 * another namespace's host, served after that namespace's own: the build goes on and the
 * object's status or Events say so.
 */
import type { Problem } from '../shared/errors.js';
import { gatewayListeners } from './gateway-listeners.js';
import { claimHosts, ownedCertificates, withRouteShares } from './host-ownership.js';
import type { RecordedOwner } from './host-owners.js';
import { httpRouteCandidates } from './httproute-routes.js';
import { ingressCandidates } from './ingress-routes.js';
import type {
  EndpointSlice,
  Gateway,
  GatewayClass,
  HTTPRoute,
  Ingress,
  IngressClass,
  Service,
} from './objects.js';
import { formatObjectProblem, type ObjectProblem } from './object-problems.js';
import { assembleRoutes, type RouteOrigin } from './route-assembly.js';
import { attributeProblem, type CertificateOrigin, type DocumentOrigins } from './route-provenance.js';
import type { ReadSecret } from './secret-refs.js';
import { indexServices } from './service-backends.js';
import { newCertificateSet, type CertificateNamesOf } from './tls-secrets.js';

/** The objects the route source reads, as listed from the API (any order). */
export interface RouteSourceInput {
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly secrets: ReadSecret;
  /** Reads a certificate's server names (default: readCertificateNames; a watcher passes a remembering one). */
  readonly certificateNames?: CertificateNamesOf;
  /**
   * Each host's owner as recorded and decided from the live objects (host-owners.ts; the watcher
   * passes heldHostOwners of its decision): a refused object's host stays its namespace's though
   * its candidates are replaced or left out. Unset: decided from these objects alone.
   */
  readonly hostOwners?: ReadonlyMap<string, RecordedOwner>;
}

/** Route entries and listener certificates for a config document, with their origins. */
export interface RouteSourceOutput {
  readonly routes: readonly Record<string, unknown>[];
  readonly routeOrigins: readonly RouteOrigin[];
  readonly certificates: readonly { readonly cert: string; readonly key: string }[];
  readonly certificateOrigins: readonly CertificateOrigin[];
  readonly problems: readonly ObjectProblem[];
  readonly skipped: readonly ObjectProblem[];
}

/** Translates every route source (see the module comment). Deterministic: same objects, same output. */
export function kubernetesRoutes(input: RouteSourceInput): RouteSourceOutput {
  const services = indexServices(input.services, input.endpointSlices);
  const certificates = newCertificateSet();
  const ingress = ingressCandidates(
    { ingressClasses: input.ingressClasses, ingresses: input.ingresses, services, secrets: input.secrets },
    certificates,
  );
  const listeners = gatewayListeners(input.gatewayClasses, input.gateways, input.secrets, certificates);
  const routes = httpRouteCandidates({
    gateways: listeners.gateways,
    httpRoutes: input.httpRoutes,
    services,
  });
  const attached = withRouteShares(routes.candidates, input.httpRoutes);
  const claimed = claimHosts([...ingress.candidates, ...attached.candidates], input.hostOwners);
  const assembled = assembleRoutes(claimed.kept);
  const served = ownedCertificates(certificates, claimed.owners, input.certificateNames);
  return {
    routes: assembled.routes,
    routeOrigins: assembled.origins,
    certificates: served.certificates,
    certificateOrigins: served.origins,
    problems: [...ingress.problems, ...listeners.problems, ...routes.problems, ...attached.problems],
    skipped: [...claimed.skipped, ...served.skipped, ...assembled.skipped],
  };
}

/**
 * `document` (the settings' config document) with the Kubernetes routes after its own `routes` and
 * the certificates after its own `certificates`, and the origins to attribute parseConfig's
 * problems with (attributeProblem). The input document is not changed.
 */
export function withKubernetesRoutes(
  document: Readonly<Record<string, unknown>>,
  source: RouteSourceOutput,
): { readonly document: Record<string, unknown>; readonly origins: DocumentOrigins } {
  const ownRoutes = Array.isArray(document.routes) ? (document.routes as unknown[]) : [];
  const ownCertificates = Array.isArray(document.certificates) ? (document.certificates as unknown[]) : [];
  return {
    document: {
      ...document,
      routes: [...ownRoutes, ...source.routes],
      ...(source.certificates.length === 0 && ownCertificates.length === 0
        ? {}
        : { certificates: [...ownCertificates, ...source.certificates] }),
    },
    origins: {
      routes: source.routeOrigins,
      routesStart: ownRoutes.length,
      certificates: source.certificateOrigins,
      certificatesStart: ownCertificates.length,
    },
  };
}

/**
 * Each problem of a parse or translate, attributed to its Kubernetes object where it has one. The
 * same problem in several routes of one object (an annotation applies to each path, and each
 * Prefix path is two routes) is reported once.
 */
export function attributeProblems(
  problems: readonly Problem[],
  origins: DocumentOrigins,
): { readonly objects: readonly ObjectProblem[]; readonly global: readonly Problem[] } {
  const objects = new Map<string, ObjectProblem>();
  const global: Problem[] = [];
  for (const problem of problems) {
    const attributed = attributeProblem(problem, origins);
    if (attributed === undefined) global.push(problem);
    else objects.set(formatObjectProblem(attributed), attributed);
  }
  return { objects: [...objects.values()], global };
}
