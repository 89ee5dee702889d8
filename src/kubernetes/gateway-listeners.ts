/**
 * Gateways of Portcullis's GatewayClass -> the listeners HTTPRoutes may attach to, and the
 * listener certificates their TLS certificateRefs name. Portcullis serves one HTTP(S) listener of
 * its own (`address`), so a Gateway listener says which hosts and routes are served and with which
 * certificates, not a port to open: HTTP and HTTPS listeners (TLS mode Terminate) are read;
 * other protocols, TLS passthrough, cross-namespace certificate references (ReferenceGrant is not
 * read) and `allowedRoutes.namespaces.from: Selector` (Namespace labels are not read) are
 * problems on the Gateway, never silently dropped.
 */
import type { Gateway, GatewayClass, Listener } from './objects.js';
import type { ReadSecret } from './secret-refs.js';
import { refOf, type ObjectProblem, type ObjectRef } from './object-problems.js';
import { addTlsSecret, type CertificateSet } from './tls-secrets.js';
import { hostProblem } from './hosts.js';
import { oldestFirst } from './route-assembly.js';

/** The GatewayClass `spec.controllerName` that makes a class Portcullis's. */
export const GATEWAY_CONTROLLER = 'portcullis.dev/gateway-controller';

/** A listener routes may attach to. */
export interface OpenListener {
  readonly gateway: ObjectRef;
  readonly name: string;
  readonly port: number;
  /** Lower case; undefined matches every host. */
  readonly hostname: string | undefined;
  /** Namespaces whose routes may attach: the Gateway's own, or all. */
  readonly from: 'Same' | 'All';
  /** Whether HTTPRoute is among `allowedRoutes.kinds` (true when none are listed). */
  readonly allowsHttpRoute: boolean;
}

/** Our Gateways by `namespace/name`, with their open listeners. */
export interface GatewayListeners {
  readonly gateways: ReadonlyMap<string, readonly OpenListener[]>;
  readonly problems: readonly ObjectProblem[];
}

/** Reads the Gateways of our GatewayClasses; certificates go to `certificates`. */
export function gatewayListeners(
  classes: readonly GatewayClass[],
  gateways: readonly Gateway[],
  secrets: ReadSecret,
  certificates: CertificateSet,
): GatewayListeners {
  const ours = new Set(
    classes
      .filter((item) => item.spec.controllerName === GATEWAY_CONTROLLER)
      .map((item) => item.metadata.name),
  );
  const byName = new Map<string, OpenListener[]>();
  const problems: ObjectProblem[] = [];
  for (const gateway of oldestFirst(gateways)) {
    if (!ours.has(gateway.spec.gatewayClassName)) continue;
    const object = refOf('Gateway', gateway.metadata);
    const namespace = gateway.metadata.namespace ?? 'default';
    const open: OpenListener[] = [];
    gateway.spec.listeners.forEach((listener, index) => {
      const where = `spec.listeners[${index}]`;
      const problem = (at: string, message: string): undefined => {
        problems.push({ object, where: `${where}${at}`, message });
        return undefined;
      };
      const read = readListener(listener, problem);
      if (read === undefined) return;
      if (listener.protocol === 'HTTPS')
        (listener.tls?.certificateRefs ?? []).forEach((ref, refIndex) => {
          const at = `.tls.certificateRefs[${refIndex}]`;
          if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret')
            return problem(at, `only Secrets are supported (got ${ref.group ?? ''}/${ref.kind ?? ''})`);
          if ((ref.namespace ?? namespace) !== namespace)
            return problem(
              at,
              `Secret ${ref.namespace}/${ref.name} is in another namespace; copy it into ${namespace} (ReferenceGrant is not supported)`,
            );
          const refused = addTlsSecret(
            certificates,
            secrets,
            { namespace, name: ref.name },
            object,
            `${where}${at}`,
          );
          if (refused !== undefined) problems.push(refused);
        });
      open.push({ gateway: object, ...read });
    });
    byName.set(`${namespace}/${gateway.metadata.name}`, open);
  }
  return { gateways: byName, problems };
}

function readListener(
  listener: Listener,
  problem: (at: string, message: string) => undefined,
): Omit<OpenListener, 'gateway'> | undefined {
  if (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS')
    return problem('.protocol', `${listener.protocol} listeners are not supported; use HTTP or HTTPS`);
  if (listener.protocol === 'HTTPS' && (listener.tls?.mode ?? 'Terminate') !== 'Terminate')
    return problem(
      '.tls.mode',
      'TLS passthrough is not supported; Portcullis must see the request to check it',
    );
  const from = listener.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'Selector')
    return problem('.allowedRoutes.namespaces.from', 'Selector is not supported; use Same or All');
  const hostname = listener.hostname?.toLowerCase();
  const invalid = hostname === undefined ? undefined : hostProblem(hostname);
  if (invalid !== undefined) return problem('.hostname', invalid);
  const kinds = listener.allowedRoutes?.kinds;
  return {
    name: listener.name,
    port: listener.port,
    hostname,
    from,
    allowsHttpRoute:
      kinds === undefined || kinds.length === 0 || kinds.some((kind) => kind.kind === 'HTTPRoute'),
  };
}
