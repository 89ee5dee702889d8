/**
 * Leader election over a coordination.k8s.io/v1 Lease, the decision part: given the Lease as read
 * (or its absence), what this replica does. Pure; the watcher reads, decides and writes (with the
 * Lease's resourceVersion, so two replicas that decide at once cannot both win: one write fails
 * with a conflict). Expiry is judged by how long the holder's record has stayed unchanged on this
 * replica's own clock, as client-go does, so clock skew between replicas never makes a live
 * holder look expired.
 */

/** The Lease spec fields election reads (times as the API server returns them). */
export interface LeaseSpec {
  readonly holderIdentity?: string | null;
  readonly leaseDurationSeconds?: number | null;
  readonly renewTime?: unknown;
}

/** The holder's record as last seen, and when (this replica's clock, ms) it was first seen so. */
export interface Observed {
  readonly record: string;
  readonly at: number;
}

/** What to do: create the Lease, renew our hold, take an expired one over, or wait. */
export type LeaseAction =
  | { readonly kind: 'create' }
  | { readonly kind: 'renew' }
  | { readonly kind: 'take'; readonly from: string }
  | { readonly kind: 'wait'; readonly holder: string };

/** The action for `lease` (undefined: no Lease yet), and the observation to keep for next time. */
export function leaseAction(
  lease: LeaseSpec | undefined,
  identity: string,
  observed: Observed | undefined,
  now: number,
): { readonly action: LeaseAction; readonly observed: Observed | undefined } {
  if (lease === undefined) return { action: { kind: 'create' }, observed: undefined };
  const holder = lease.holderIdentity ?? '';
  if (holder === identity) return { action: { kind: 'renew' }, observed: undefined };
  if (holder === '') return { action: { kind: 'take', from: '' }, observed: undefined };
  const record = `${holder}\u0000${String(lease.renewTime)}`;
  const seen = observed?.record === record ? observed : { record, at: now };
  const durationMs = (lease.leaseDurationSeconds ?? 15) * 1000;
  if (now - seen.at >= durationMs) return { action: { kind: 'take', from: holder }, observed: undefined };
  return { action: { kind: 'wait', holder }, observed: seen };
}
