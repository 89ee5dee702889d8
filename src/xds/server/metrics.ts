import { SHORT_NAMES } from '../../proto/type-urls.js';
import type { ResourceType } from '../../proto/type-urls.js';

/** Short type names used as counter keys: `clusters`, `endpoints`, `listeners`, `routes`. */
export type TypeName = (typeof SHORT_NAMES)[ResourceType];

/** Per-type counters. */
export type TypeCounters = Record<TypeName, number>;

/** The most recent NACK seen by the server, for tests, logs and a future status page. */
export interface NackDetail {
  readonly mode: 'sotw' | 'delta';
  readonly nodeId: string;
  readonly typeUrl: string;
  readonly nonce: string;
  /** SotW: the rejected type version. Delta: the rejected resources as `name@version`. */
  readonly rejected: string;
  /** `error_detail.code` and `error_detail.message` exactly as Envoy sent them. */
  readonly code: number;
  readonly message: string;
}

/**
 * Counters of the ADS server. A plain copy (`AdsMetrics.snapshot()`), so callers can compare two
 * readings without seeing later updates.
 */
export interface AdsStats {
  readonly streamsOpen: number;
  readonly streamsTotal: number;
  /** Requests received (all kinds, including malformed ones). */
  readonly requests: number;
  readonly responsesSent: TypeCounters;
  readonly acks: TypeCounters;
  readonly nacks: TypeCounters;
  /** Requests ignored because their nonce was not one the server is waiting on. */
  readonly staleRequests: number;
  /** Requests whose bytes did not decode. */
  readonly malformedRequests: number;
  /** Requests for a type URL Portcullis does not serve. */
  readonly unknownTypeRequests: number;
  /** Streams refused before any resource was sent: no valid gRPC credential (UNAUTHENTICATED). */
  readonly unauthenticatedStreams: number;
  readonly lastNack: NackDetail | undefined;
}

function zeroCounters(): TypeCounters {
  return { clusters: 0, endpoints: 0, filters: 0, listeners: 0, scopes: 0, routes: 0 };
}

/** Mutable counters shared by all streams of one `AdsServer`. */
export class AdsMetrics {
  streamsOpen = 0;
  streamsTotal = 0;
  requests = 0;
  staleRequests = 0;
  malformedRequests = 0;
  unknownTypeRequests = 0;
  unauthenticatedStreams = 0;
  lastNack: NackDetail | undefined;
  private readonly sent = zeroCounters();
  private readonly acked = zeroCounters();
  private readonly nacked = zeroCounters();

  /** Counts one response written for `type`. */
  responseSent(type: ResourceType): void {
    this.sent[SHORT_NAMES[type]] += 1;
  }

  /** Counts one ACK for `type`. */
  ack(type: ResourceType): void {
    this.acked[SHORT_NAMES[type]] += 1;
  }

  /** Counts one NACK for `type` and remembers its detail. */
  nack(type: ResourceType, detail: NackDetail): void {
    this.nacked[SHORT_NAMES[type]] += 1;
    this.lastNack = detail;
  }

  /** A detached copy of every counter. */
  snapshot(): AdsStats {
    return {
      streamsOpen: this.streamsOpen,
      streamsTotal: this.streamsTotal,
      requests: this.requests,
      responsesSent: { ...this.sent },
      acks: { ...this.acked },
      nacks: { ...this.nacked },
      staleRequests: this.staleRequests,
      malformedRequests: this.malformedRequests,
      unknownTypeRequests: this.unknownTypeRequests,
      unauthenticatedStreams: this.unauthenticatedStreams,
      lastNack: this.lastNack,
    };
  }
}
