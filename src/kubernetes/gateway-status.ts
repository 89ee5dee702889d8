/**
 * The Gateway API status Portcullis owes its objects (pure): what `kubectl get gateway` and
 * `kubectl describe httproute` show. From the listed objects, this pass's problems in them (the
 * RouteRefused Events' problems) and whether some config serves, it returns the status writes
 * that would change something (each write is itself a change every replica sees):
 * - GatewayClass of our controllerName: `Accepted` True.
 * - Gateway of such a class: `Accepted` (False / reason ListenersNotValid when no listener is
 *   accepted; True with that reason when some are not), `Programmed` (True while Portcullis serves
 *   and the Gateway has no problem of its own; False with reason Invalid naming its problems, or
 *   Pending while nothing serves), `addresses` (the publish address, when there is one), and per
 *   listener its supportedKinds, attachedRoutes (gateway-attachment.ts) and the conditions
 *   `Accepted` (UnsupportedProtocol / UnsupportedValue from gateway-listeners.ts's problems),
 *   `ResolvedRefs` (InvalidCertificateRef / RefNotPermitted for its certificateRefs,
 *   InvalidRouteKinds for allowedRoutes.kinds other than HTTPRoute) and `Programmed`.
 * - HTTPRoute: its parents entries for our Gateways (httproute-status.ts).
 * Programmed is read from this pass: True when some config serves and the Gateway has no problem
 * of its own; a Gateway whose change is refused says so (Invalid) while its last good version keeps
 * serving. While a problem in another object keeps a whole change out, a new Gateway can read
 * Programmed before its routes serve; once each object without problems is built on its own
 * (per-object isolation), this is exact. Every condition carries the object's generation and keeps
 * its lastTransitionTime while its status holds (gateway-conditions.ts). Messages are the
 * problems' text (formatObjectProblem), which names fields and never a Secret's contents.
 */
import { isIP } from 'node:net';
import { canonicalJson } from '../shared/canonical-json.js';
import { attaches, gatewayKey, supportedKinds, unsupportedKinds } from './gateway-attachment.js';
import { statusField, withTimes, type ConditionFacts } from './gateway-conditions.js';
import { GATEWAY_CONTROLLER, gatewayListeners } from './gateway-listeners.js';
import { httpRouteStatus } from './httproute-status.js';
import type { Gateway, GatewayClass, HTTPRoute, Listener } from './objects.js';
import { describeObject, formatObjectProblem, type ObjectProblem } from './object-problems.js';
import { newCertificateSet } from './tls-secrets.js';

/** What the status is computed from. */
export interface GatewayStatusInput {
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  /** This pass's problems in route objects (duplicates allowed). */
  readonly problems: readonly ObjectProblem[];
  /** Paths left out by rule (route-assembly.ts); the objects stay accepted. */
  readonly skipped: readonly ObjectProblem[];
  /** Whether some config is in force. */
  readonly serving: boolean;
  /** Where Portcullis is reached (`--publish-address`): an IP or a host name; undefined: none written. */
  readonly address: string | undefined;
  readonly now: Date;
}

/** One status subresource write. */
export interface StatusWrite {
  readonly kind: 'GatewayClass' | 'Gateway' | 'HTTPRoute';
  readonly plural: 'gatewayclasses' | 'gateways' | 'httproutes';
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  /** The version the status was computed from. */
  readonly resourceVersion?: string;
  readonly status: Record<string, unknown>;
}

const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LISTENER_WHERE = /^spec\.listeners\[(\d+)\](.*)$/;
const CERTIFICATE_WHERE = /^\.tls\.certificateRefs\[(\d+)\]/;

/** `status.addresses` for `address`: an IP as IPAddress, a host name as Hostname, anything else left out. */
export function gatewayAddresses(address: string | undefined): { type: string; value: string }[] | undefined {
  if (address === undefined) return undefined;
  if (isIP(address) !== 0) return [{ type: 'IPAddress', value: address }];
  return HOSTNAME.test(address) ? [{ type: 'Hostname', value: address }] : undefined;
}

/** The status writes that change something (see the module comment). */
export function gatewayApiStatusWrites(input: GatewayStatusInput): StatusWrite[] {
  const ours = new Set(
    input.gatewayClasses
      .filter((item) => item.spec.controllerName === GATEWAY_CONTROLLER)
      .map((item) => item.metadata.name),
  );
  // The listeners' structure again, without Secrets: which are accepted, and their problems even
  // in a pass that stopped before reading routes. Certificate problems come from the pass only.
  const listeners = gatewayListeners(
    input.gatewayClasses,
    input.gateways,
    () => undefined,
    newCertificateSet(),
  );
  const structural = listeners.problems.filter((p) => !(p.where ?? '').includes('.tls.certificateRefs'));
  const byObject = groupByObject([...input.problems, ...structural]);
  const skippedByObject = groupByObject(input.skipped);
  const writes: StatusWrite[] = [];
  const add = (
    kind: StatusWrite['kind'],
    plural: StatusWrite['plural'],
    object: ObjectWithStatus,
    status: Record<string, unknown>,
  ) => {
    const { name, namespace, uid, resourceVersion } = object.metadata;
    writes.push({
      kind,
      plural,
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      status,
    });
  };
  for (const item of input.gatewayClasses) {
    if (item.spec.controllerName !== GATEWAY_CONTROLLER) continue;
    const conditions = withTimes(
      [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          message: `handled by Portcullis (${GATEWAY_CONTROLLER})`,
        },
      ],
      statusField(item, 'conditions'),
      item.metadata.generation,
      input.now,
    );
    const status = { conditions };
    if (!sameAs(status, item)) add('GatewayClass', 'gatewayclasses', item, status);
  }
  const gateways = new Map<string, Gateway>();
  for (const gateway of input.gateways) {
    if (!ours.has(gateway.spec.gatewayClassName)) continue;
    gateways.set(gatewayKey(gateway), gateway);
    const status = gatewayStatus(gateway, byObject.get(keyOf('Gateway', gateway)) ?? [], input);
    if (!sameAs(status, gateway)) add('Gateway', 'gateways', gateway, status);
  }
  const context = { gateways, open: listeners.gateways, serving: input.serving, now: input.now };
  for (const route of input.httpRoutes) {
    const key = keyOf('HTTPRoute', route);
    const status = httpRouteStatus(route, byObject.get(key) ?? [], skippedByObject.get(key) ?? [], context);
    if (status !== undefined) add('HTTPRoute', 'httproutes', route, status);
  }
  return writes;
}

type ObjectWithStatus = GatewayClass | Gateway | HTTPRoute;

function keyOf(kind: string, object: ObjectWithStatus): string {
  return describeObject({
    kind,
    name: object.metadata.name,
    ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
  });
}

/** Problems by object (describeObject), each problem once. */
function groupByObject(problems: readonly ObjectProblem[]): Map<string, ObjectProblem[]> {
  const seen = new Set<string>();
  const grouped = new Map<string, ObjectProblem[]>();
  for (const problem of problems) {
    const text = formatObjectProblem(problem);
    if (seen.has(text)) continue;
    seen.add(text);
    const key = describeObject(problem.object);
    grouped.set(key, [...(grouped.get(key) ?? []), problem]);
  }
  return grouped;
}

function sameAs(status: Record<string, unknown>, object: ObjectWithStatus): boolean {
  return canonicalJson(status) === canonicalJson((object as { status?: unknown }).status ?? {});
}

function joined(problems: readonly ObjectProblem[]): string {
  return problems.map(formatObjectProblem).join('; ');
}

/** The status of our Gateway `gateway` with its problems `problems`. */
function gatewayStatus(
  gateway: Gateway,
  problems: readonly ObjectProblem[],
  input: GatewayStatusInput,
): Record<string, unknown> {
  const generation = gateway.metadata.generation;
  const perListener = gateway.spec.listeners.map(() => [] as { problem: ObjectProblem; rest: string }[]);
  for (const problem of problems) {
    const found = LISTENER_WHERE.exec(problem.where ?? '');
    if (found !== null) perListener[Number(found[1])]?.push({ problem, rest: found[2] ?? '' });
  }
  const programmed: ConditionFacts =
    problems.length > 0
      ? {
          type: 'Programmed',
          status: 'False',
          reason: 'Invalid',
          message: `${joined(problems)}; ${input.serving ? 'the last good config keeps serving' : 'nothing is served yet'}`,
        }
      : input.serving
        ? { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'served by Portcullis' }
        : { type: 'Programmed', status: 'False', reason: 'Pending', message: 'nothing is served yet' };
  const previousListeners = statusField(gateway, 'listeners');
  const listeners = gateway.spec.listeners.map((listener, index) => {
    const own = perListener[index] ?? [];
    const previous = Array.isArray(previousListeners)
      ? (previousListeners as { name?: unknown; conditions?: unknown }[]).find(
          (entry) => entry?.name === listener.name,
        )
      : undefined;
    return {
      name: listener.name,
      supportedKinds: supportedKinds(listener),
      attachedRoutes: input.httpRoutes.filter((route) =>
        (route.spec.parentRefs ?? []).some((parent) =>
          attaches(parent, route.metadata.namespace ?? 'default', gateway, listener),
        ),
      ).length,
      conditions: withTimes(
        listenerFacts(gateway, listener, own, programmed),
        previous?.conditions,
        generation,
        input.now,
      ),
    };
  });
  const refused = listeners
    .filter((entry) => entry.conditions[0]?.status === 'False')
    .map((entry) => entry.name);
  const accepted: ConditionFacts =
    refused.length === 0
      ? { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted by Portcullis' }
      : {
          type: 'Accepted',
          status: refused.length === listeners.length ? 'False' : 'True',
          reason: 'ListenersNotValid',
          message: `listeners not accepted: ${refused.join(', ')} (see status.listeners)`,
        };
  const addresses = gatewayAddresses(input.address);
  return {
    ...(addresses === undefined ? {} : { addresses }),
    conditions: withTimes([accepted, programmed], statusField(gateway, 'conditions'), generation, input.now),
    listeners,
  };
}

/** Accepted, ResolvedRefs and Programmed of one listener; `own` are its problems, `rest` the field below it. */
function listenerFacts(
  gateway: Gateway,
  listener: Listener,
  own: readonly { problem: ObjectProblem; rest: string }[],
  gatewayProgrammed: ConditionFacts,
): ConditionFacts[] {
  const certificates = own.filter((entry) => CERTIFICATE_WHERE.test(entry.rest));
  const others = own.filter((entry) => !CERTIFICATE_WHERE.test(entry.rest));
  const accepted: ConditionFacts =
    others.length === 0
      ? { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted by Portcullis' }
      : {
          type: 'Accepted',
          status: 'False',
          reason: others.some((entry) => entry.rest === '.protocol')
            ? 'UnsupportedProtocol'
            : 'UnsupportedValue',
          message: joined(others.map((entry) => entry.problem)),
        };
  const kinds = unsupportedKinds(listener);
  let resolved: ConditionFacts = {
    type: 'ResolvedRefs',
    status: 'True',
    reason: 'ResolvedRefs',
    message: 'every reference resolves',
  };
  if (certificates.length > 0) {
    const index = Number(CERTIFICATE_WHERE.exec(certificates[0]?.rest ?? '')?.[1]);
    const ref = listener.tls?.certificateRefs?.[index];
    const namespace = gateway.metadata.namespace ?? 'default';
    resolved = {
      type: 'ResolvedRefs',
      status: 'False',
      reason:
        ref !== undefined && (ref.namespace ?? namespace) !== namespace
          ? 'RefNotPermitted'
          : 'InvalidCertificateRef',
      message: joined(certificates.map((entry) => entry.problem)),
    };
  } else if (kinds.length > 0)
    resolved = {
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'InvalidRouteKinds',
      message: `spec.listeners[${gateway.spec.listeners.indexOf(listener)}].allowedRoutes.kinds: only HTTPRoute is supported (got ${kinds.join(', ')})`,
    };
  const programmed: ConditionFacts =
    own.length > 0
      ? {
          type: 'Programmed',
          status: 'False',
          reason: 'Invalid',
          message: joined(own.map((entry) => entry.problem)),
        }
      : gatewayProgrammed.status === 'True'
        ? gatewayProgrammed
        : { type: 'Programmed', status: 'False', reason: 'Pending', message: gatewayProgrammed.message };
  return [accepted, resolved, programmed];
}
