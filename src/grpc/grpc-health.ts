/**
 * The standard gRPC health service (`grpc.health.v1.Health`: Check, Watch, List) on a Portcullis
 * gRPC server, from `grpc-health-check`, so load balancers, Kubernetes gRPC probes and
 * `grpc_health_probe` see whether a process (service name '') and each service it runs
 * ('envoy.service.auth.v3.Authorization', 'portcullis.databroker.v1.Databroker', ...) is serving.
 * The gate (grpc-limits.ts) leaves it open: it reveals only serving states.
 *
 * One change to the library's behaviour: a Watch for a service name never set here gets
 * SERVICE_UNKNOWN and its stream is ended, where the library would keep it open and remember the
 * name for good. Anyone can call Watch, so otherwise a client sending distinct (up to 4 MiB)
 * names would grow the server's memory without bound.
 */
import type * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

/** The serving states of one server's health service. */
export interface HealthStatus {
  /** Sets `service` ('' for the whole process) SERVING or NOT_SERVING; Watch streams see it at once. */
  set(service: string, serving: boolean): void;
}

interface WatchRequest {
  readonly service: string;
}
interface WatchResponse {
  readonly status: string;
}

/**
 * Adds the health service to `server` (before it starts). The process ('') starts NOT_SERVING
 * until `set('', true)`; a service name never set answers Check with NOT_FOUND.
 */
export function registerHealth(server: grpc.Server): HealthStatus {
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  const known = new Set<string>(['']);
  health.addToServer({
    addService(service, implementation) {
      // The library's handlers are typed against its own copy of the server types.
      const handlers = implementation as unknown as grpc.UntypedServiceImplementation;
      const watch = handlers['watch'] as grpc.handleServerStreamingCall<WatchRequest, WatchResponse>;
      const guardedWatch: grpc.handleServerStreamingCall<WatchRequest, WatchResponse> = (call) => {
        if (known.has(call.request.service)) {
          watch(call);
          return;
        }
        call.write({ status: 'SERVICE_UNKNOWN' });
        call.end();
      };
      server.addService(service as unknown as grpc.ServiceDefinition, { ...handlers, watch: guardedWatch });
    },
  });
  return {
    set(service, serving) {
      known.add(service);
      health.setStatus(service, serving ? 'SERVING' : 'NOT_SERVING');
    },
  };
}
