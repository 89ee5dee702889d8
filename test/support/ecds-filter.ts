import { encodeMessage, typed } from '../../src/proto/codec.js';
import { TYPED_EXTENSION_CONFIG_TYPE } from '../../src/proto/type-urls.js';
import { shortHash } from '../../src/shared/hash.js';
import type { EncodedResource } from '../../src/xds/snapshot/types.js';

/** The RBAC filter's type URL: what the test's ECDS filter accepts. */
export const RBAC_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';

/**
 * One ECDS resource named `name`: an RBAC filter config that answers 403 to requests carrying the
 * header `header` and lets every other request through, encoded as the snapshot store holds it.
 */
export function denyHeaderFilterConfig(name: string, header: string): EncodedResource {
  const bytes = encodeMessage(TYPED_EXTENSION_CONFIG_TYPE, {
    name,
    typed_config: typed('envoy.extensions.filters.http.rbac.v3.RBAC', {
      rules: {
        action: 'DENY',
        policies: {
          marked: {
            permissions: [{ header: { name: header, present_match: true } }],
            principals: [{ any: true }],
          },
        },
      },
    }),
  });
  return { name, version: shortHash(bytes), bytes };
}
