import type { DecisionRevocation } from '../../contract/fast-path.js';
import type { Message } from '../../proto/messages.js';

/**
 * The ECDS resource carrying the fast path's shadow RBAC config (FAST_PATH_FILTER): the revoked
 * sessions, each refusing tokens minted at or before its `notBeforeMs`; `overflowed` refuses
 * every token (every request asks Portcullis). Placeholder signature: the compile of the matcher
 * tree lands with the fast-path filters.
 */
export function compileFastPathRbac(
  revocations: readonly DecisionRevocation[],
  overflowed: boolean,
): Message<'envoy.config.core.v3.TypedExtensionConfig'> {
  void revocations;
  void overflowed;
  throw new Error('not built yet');
}
