/**
 * Host names as Ingress rules and HTTPRoute hostnames give them: a DNS name, or `*.` followed by
 * one (the Kubernetes wildcard). Checked here so a bad host is named in its object; parseConfig
 * checks the `from` URL again as for any route.
 */

import { publicSuffixParse } from '../config/public-suffix.js';

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Why `host` (lower case) is not a Kubernetes host name Portcullis serves, or undefined when it is
 * one. A wildcard over a public suffix (`*.com`, `*.co.uk`, `*.github.io`: the Public Suffix List,
 * private domains included, and a single label such as `*.internal`) is refused: it names no one's
 * site, and with host ownership it would claim every future host under that suffix for one namespace.
 */
export function hostProblem(host: string): string | undefined {
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.length === 0 || name.length > 253 || !name.split('.').every((label) => LABEL.test(label)))
    return `${JSON.stringify(host)} is not a host name (a DNS name, optionally after "*.")`;
  if (host.startsWith('*.') && publicSuffixParse(name).publicSuffix === name)
    return `${JSON.stringify(host)} is a wildcard over the public suffix ${name}: it would match every site under it; name a domain of your own (*.example.${name})`;
  return undefined;
}

/**
 * The hosts both a listener hostname and a route hostname match (Gateway API's intersection), or
 * undefined when they share none. An unset side matches every host.
 */
export function intersectHosts(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined || listener === route) return route;
  if (route === '*') return listener;
  if (listener.startsWith('*.') && !route.startsWith('*.') && route.endsWith(listener.slice(1))) return route;
  if (route.startsWith('*.') && !listener.startsWith('*.') && listener.endsWith(route.slice(1)))
    return listener;
  if (listener.startsWith('*.') && route.startsWith('*.')) {
    if (route.endsWith(listener.slice(1))) return route;
    if (listener.endsWith(route.slice(1))) return listener;
  }
  return undefined;
}
