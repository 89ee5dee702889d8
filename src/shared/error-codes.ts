/**
 * Every stable error code Portcullis shows a user, with what it means: the one table that the
 * `PortcullisError` type, the operators' reference (docs/reference.md, "Error codes") and tests
 * read, so a code is never a free string that drifts between the place that throws it and the
 * place that matches on it. Add a code here, nowhere else.
 */
export const ERROR_CODES = {
  CONFIG_INVALID:
    'The config (file, environment or a reload) has problems; each is listed with its key path.',
  CONFIG_MISSING: 'No config was given: pass `--config <file>`.',
  KUBE_CONFIG_INVALID:
    '`portcullis kubernetes` found no usable cluster connection: no in-cluster service account, no `--kubeconfig`, `KUBECONFIG` or `~/.kube/config`.',
  KUBE_API_UNREACHABLE:
    '`portcullis kubernetes` could not reach the Kubernetes API server at start, or was refused by it.',
  KUBE_CRD_MISSING:
    'The `portcullises.portcullis.dev` CustomResourceDefinition is not installed: `kubectl apply -f deploy/kubernetes/crd.yaml`.',
  NOT_ALL_IN_ONE:
    '`services` lists only some services, but this entry point runs all of them: start it with `portcullis run`.',
  SHARED_SECRET_REQUIRED:
    'Sidecar mode (`--without-envoy`) needs `shared_secret`: the sidecar Envoy presents a gRPC credential derived from it.',
  SIGNING_KEY_INVALID: '`signing_key` is not a usable ECDSA or RSA private key.',
  GRPC_BIND_FAILED: 'The gRPC port (`grpc_address`) could not be opened: in use, or not permitted.',
  HTTP_BIND_FAILED: "The authenticate service's own HTTP port (the gRPC port + 1) could not be opened.",
  METRICS_BIND_FAILED: '`metrics_address` could not be opened: in use, or not permitted.',
  ENVOY_NOT_FOUND: 'No Envoy binary was found: set `ENVOY_BIN` or run `npm run setup`.',
  ENVOY_OPTIONS_INVALID:
    'The options for the supervised Envoy are inconsistent (a programming error, reported as such).',
  ENVOY_BOOTSTRAP_INVALID:
    'The Envoy bootstrap cannot be built from these settings (for example an admin address off loopback).',
  ENVOY_ALREADY_STARTED: 'The supervised Envoy was started twice.',
  ENVOY_START_FAILED: 'The supervised Envoy could not be started.',
  ENVOY_NOT_READY: 'The supervised Envoy did not become ready in time.',
  ENVOY_ADMIN_UNREACHABLE: "Envoy's admin interface did not answer.",
  ENVOY_DRAIN_FAILED: 'Envoy refused to drain its listeners before stopping.',
  ENVOY_LOG_LEVEL_FAILED: "Envoy's log levels could not be changed through its admin interface.",
  STORE_UNAVAILABLE:
    'The session store (memory, Redis or a remote databroker) could not be reached or did not answer in time.',
  RECORD_CONFLICT: 'A session record changed between its read and its write; the write was not made.',
  XDS_UNKNOWN_FIELD:
    'A compiled Envoy resource names a field its message type does not have (a programming error).',
  CLIENT_USAGE: 'The `portcullis` client command was called with wrong arguments.',
  CLIENT_CONNECT: 'The client could not reach Portcullis.',
  CLIENT_TLS: "The client could not verify Portcullis's TLS certificate.",
  CLIENT_PROXY: 'The client could not go through the HTTP proxy from the environment.',
  CLIENT_LOGIN: 'The programmatic sign-in did not complete.',
  CLIENT_UNAUTHENTICATED:
    'Portcullis still asks the client to sign in right after a sign-in: the client probably uses the wrong host for the route.',
  CLIENT_REFUSED: 'Portcullis refused the tunnel; the message says why (policy, no such route).',
  CLIENT_ABORTED: 'The user stopped the client (Ctrl-C).',
} as const satisfies Record<string, string>;

/** A stable error code: a key of ERROR_CODES. */
export type ErrorCode = keyof typeof ERROR_CODES;
