// A stand-in for compileFastPathRbac (xds/compile/fast-path-rbac.ts) in tests of the revocation
// feed: it records what it was handed and encodes it in a valid ECDS resource (an RBAC filter with
// one policy per revoked session, named `<sid>@<notBeforeMs>`, and `*overflowed*`), which
// `revocationsIn` reads back from what the snapshot store serves. The feed's tests assert on the
// revocations, not on the real filter's matcher tree, which other tests own.
import { FAST_PATH_FILTER, type DecisionRevocation } from '../../src/contract/fast-path.js';
import { decodeMessage, typed } from '../../src/proto/codec.js';
import type { Message } from '../../src/proto/messages.js';
import { TYPED_EXTENSION_CONFIG_TYPE } from '../../src/proto/type-urls.js';
import type { EncodedResource } from '../../src/xds/snapshot/types.js';

/** The policy name that stands for `overflowed`. */
const OVERFLOWED = '*overflowed*';

/** One call of the recording compile. */
export interface CompileCall {
  readonly revocations: readonly DecisionRevocation[];
  readonly overflowed: boolean;
  /** performance.now() of the call. */
  readonly atMs: number;
}

/** What a stand-in's resource says: the revocations and whether every token is refused. */
export interface CompiledRevocations {
  readonly revocations: readonly DecisionRevocation[];
  readonly overflowed: boolean;
}

/**
 * A compile function with compileFastPathRbac's signature that records each call in `calls` and
 * throws while `fail` returns a message (given what it was handed).
 */
export function recordingCompile(
  fail: (revocations: readonly DecisionRevocation[], overflowed: boolean) => string | undefined = () =>
    undefined,
): {
  readonly calls: CompileCall[];
  compile(
    revocations: readonly DecisionRevocation[],
    overflowed: boolean,
  ): Message<'envoy.config.core.v3.TypedExtensionConfig'>;
} {
  const calls: CompileCall[] = [];
  return {
    calls,
    compile(revocations, overflowed) {
      calls.push({ revocations: [...revocations], overflowed, atMs: performance.now() });
      const failure = fail(revocations, overflowed);
      if (failure !== undefined) throw new Error(failure);
      const names = [
        ...revocations.map(({ sid, notBeforeMs }) => `${sid}@${notBeforeMs}`),
        ...(overflowed ? [OVERFLOWED] : []),
      ];
      return {
        name: FAST_PATH_FILTER,
        typed_config: typed('envoy.extensions.filters.http.rbac.v3.RBAC', {
          rules: {
            action: 'DENY',
            policies: Object.fromEntries(
              names.map((name) => [name, { permissions: [{ any: true }], principals: [{ any: true }] }]),
            ),
          },
        }),
      };
    },
  };
}

/** What a resource made by `recordingCompile` holds. */
export function revocationsIn(resource: EncodedResource): CompiledRevocations {
  const decoded = decodeMessage(TYPED_EXTENSION_CONFIG_TYPE, resource.bytes) as {
    name?: string;
    typed_config?: { rules?: { policies?: Record<string, unknown> } };
  };
  if (decoded.name !== FAST_PATH_FILTER) throw new Error(`not the fast path filter: ${decoded.name}`);
  const names = Object.keys(decoded.typed_config?.rules?.policies ?? {});
  return {
    revocations: names
      .filter((name) => name !== OVERFLOWED)
      .map((name) => {
        const at = name.lastIndexOf('@');
        return { sid: name.slice(0, at), notBeforeMs: Number(name.slice(at + 1)) };
      })
      .sort((a, b) => (a.sid < b.sid ? -1 : a.sid > b.sid ? 1 : 0)),
    overflowed: names.includes(OVERFLOWED),
  };
}
