import type { ResourceType } from '../../proto/type-urls.js';

/**
 * What an ADS stream tells the server's event listeners (`AdsServer.onEvent`), so a layer above
 * can act on what each Envoy really holds (make-before-break removal waits for these):
 *
 * - `acked`: every response of `type` sent on the stream was ACKed and nothing of the current
 *   snapshot remains to send: the Envoy holds `version` (the snapshot's type version) of every
 *   resource of the type it subscribed to.
 * - `pending`: the stream asked for `type` and its Envoy does not hold the current version of it
 *   (a response awaits its ACK, or the Envoy NACKed it and keeps an older one).
 * - `nacked`: the Envoy rejected a response of `type` just sent on the stream (its
 *   `error_detail` is `errorDetail`); it keeps what it held before. A `pending` for the type
 *   stands as well; this event only says why (the reload loop reports it as a failed reload).
 * - `closed`: the stream ended; its Envoy no longer counts (a reconnect is a new stream).
 *
 * `stream` is a number unique per server; `nodeId` is the node the stream's first request named.
 * A stream reports a type only after its Envoy first asks for it, and reports a state only when it
 * differs from the one it reported last.
 */
export type AdsStreamEvent =
  | {
      readonly kind: 'acked';
      readonly stream: number;
      readonly nodeId: string;
      readonly type: ResourceType;
      readonly version: string;
    }
  | {
      readonly kind: 'pending';
      readonly stream: number;
      readonly nodeId: string;
      readonly type: ResourceType;
    }
  | {
      readonly kind: 'nacked';
      readonly stream: number;
      readonly nodeId: string;
      readonly type: ResourceType;
      readonly errorDetail: string;
    }
  | { readonly kind: 'closed'; readonly stream: number; readonly nodeId: string };

/** A listener of `AdsStreamEvent`s; it must not throw (a throw is logged and ignored). */
export type AdsEventListener = (event: AdsStreamEvent) => void;
