// Which routes a decision token names (authorize/fast-path/allowed-routes.ts): the requested route
// first, then the host's other replayable routes whose policy allows the session, in config order;
// never a route of another identity-provider client; at most MAX_EVALUATED_SIBLINGS evaluated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteAuthz, RouteDecision } from '../../../../src/authorize/authz-state.js';
import type { AuthorizeRequest } from '../../../../src/authorize/decision.js';
import { allowedRoutes, MAX_EVALUATED_SIBLINGS } from '../../../../src/authorize/fast-path/allowed-routes.js';
import type { PolicyOutcome } from '../../../../src/authorize/policy/compile-policy.js';
import type { Session } from '../../../../src/session/session.js';

const ALLOW: PolicyOutcome = {
  allow: true,
  deny: false,
  unauthenticated: false,
  allowReasons: [],
  denyReasons: [],
};
const DENY: PolicyOutcome = { ...ALLOW, deny: true };
const SIGN_IN: PolicyOutcome = { ...ALLOW, allow: false, unauthenticated: true };

const session = { id: 's', idpId: 'idp-a', claims: {} } as unknown as Session;
const request = {} as AuthorizeRequest;

/** A host's replayable routes, one per outcome, sharing one hostRoutes list as buildAuthzState does. */
function host(routes: readonly { outcome: PolicyOutcome; idpId?: string; identity?: boolean }[]): {
  routes: RouteAuthz[];
  evaluated: string[];
} {
  const hostRoutes: RouteAuthz[] = [];
  const evaluated: string[] = [];
  routes.forEach((spec, index) => {
    const name = `r${index}`;
    hostRoutes.push({
      id: name,
      public: false,
      passIdentityHeaders: spec.identity ?? false,
      idpId: spec.idpId ?? 'idp-a',
      policy: () => {
        evaluated.push(name);
        return spec.outcome;
      },
      decision: { name, hostRoutes },
    });
  });
  return { routes: hostRoutes, evaluated };
}

const decisionOf = (route: RouteAuthz | undefined): RouteDecision => {
  assert.ok(route?.decision);
  return route.decision;
};

test('the requested route first, then allowed siblings in order; denied, sign-in and other-IdP ones left out', () => {
  const { routes, evaluated } = host([
    { outcome: ALLOW },
    { outcome: DENY },
    { outcome: ALLOW, identity: true },
    { outcome: SIGN_IN },
    { outcome: ALLOW, idpId: 'idp-b', identity: true },
    { outcome: ALLOW },
  ]);
  const requested = routes[5];
  assert.ok(requested);
  const allowed = allowedRoutes(requested, decisionOf(requested), request, session);
  assert.deepEqual(allowed.names, ['r5', 'r0', 'r2']);
  assert.equal(allowed.identity, true, 'r2 passes identity headers');
  assert.deepEqual(evaluated, ['r0', 'r1', 'r2', 'r3'], 'neither the requested route nor another IdP’s');
  const withoutIdentity = allowedRoutes(routes[0] as RouteAuthz, decisionOf(routes[0]), request, {
    ...session,
    idpId: 'idp-c',
  });
  assert.deepEqual(withoutIdentity.names, ['r0'], 'no sibling of this session’s client');
  assert.equal(withoutIdentity.identity, false);
});

test('at most MAX_EVALUATED_SIBLINGS siblings are evaluated', () => {
  const { routes, evaluated } = host(Array.from({ length: 200 }, () => ({ outcome: ALLOW })));
  const requested = routes[100] as RouteAuthz;
  const allowed = allowedRoutes(requested, decisionOf(requested), request, session);
  assert.equal(evaluated.length, MAX_EVALUATED_SIBLINGS);
  assert.equal(allowed.names.length, MAX_EVALUATED_SIBLINGS + 1);
  assert.equal(allowed.names[0], 'r100');
  assert.deepEqual(allowed.names.slice(1, 3), ['r0', 'r1'], 'config order');
});
