import type { ProtoAny, ProtoAnyMessages, ProtoEnums, ProtoMessages } from '../../proto/envoy-types.js';

/**
 * Names for the generated message types (proto/envoy-types.d.ts, written by `npm run proto` from
 * the same protobufjs root the codec encodes with). Each type is the object protobufjs's
 * `fromObject` accepts for that message, as compile writes it: snake_case fields, all optional;
 * enum values by name; Durations as `{seconds, nanos}`; wrappers as `{value}`; Struct and Value in
 * protobufjs's own member names; Any as `@type` plus the named message's fields. Typing compile's
 * output with these makes a misspelt field, a wrong enum name or a typed config of the wrong
 * message a `npm run typecheck` error instead of a setting protobufjs silently drops.
 */
export type MessageName = keyof ProtoMessages;

/** The message `N` (`Message<'envoy.config.cluster.v3.Cluster'>`): see `MessageName`. */
export type Message<N extends MessageName> = ProtoMessages[N];

/** The enum `N` (`EnumValue<'envoy.config.core.v3.RoutingPriority'>`): the union of its value names. */
export type EnumValue<N extends keyof ProtoEnums> = ProtoEnums[N];

/** The message `N` as a `google.protobuf.Any` body: its fields plus `@type` naming it (`typed`). */
export type AnyOf<N extends MessageName> = ProtoAnyMessages[N];

/** Any message as a `google.protobuf.Any` body: the type of every `typed_config`. */
export type AnyMessage = ProtoAny;
