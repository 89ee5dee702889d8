/**
 * The Kubernetes objects the route source reads, as the minimal shapes it needs: only the fields
 * read anywhere in src/kubernetes, all optional where the API server may leave them out. The pure
 * stages take these plain objects (what the API returns as JSON), so they need no client library
 * and tests can write them as literals. Field names are the API's own
 * (https://kubernetes.io/docs/reference/kubernetes-api/).
 */

/** metav1.ObjectMeta: what names an object, orders conflicts and carries annotations. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  /** RFC 3339; the older object wins a conflict, as Kubernetes controllers agree. */
  readonly creationTimestamp?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A port given by number or by the name of a Service port. */
export interface ServiceBackendPort {
  readonly number?: number;
  readonly name?: string;
}

/** networking.k8s.io/v1 IngressBackend: a Service port (a `resource` backend is refused). */
export interface IngressBackend {
  readonly service?: { readonly name: string; readonly port?: ServiceBackendPort };
  readonly resource?: { readonly apiGroup?: string; readonly kind: string; readonly name: string };
}

/** networking.k8s.io/v1 HTTPIngressPath. */
export interface HTTPIngressPath {
  readonly path?: string;
  readonly pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific';
  readonly backend: IngressBackend;
}

/** networking.k8s.io/v1 IngressRule: a host (exact, `*.` wildcard, or none for every host). */
export interface IngressRule {
  readonly host?: string;
  readonly http?: { readonly paths: readonly HTTPIngressPath[] };
}

/** networking.k8s.io/v1 IngressTLS. */
export interface IngressTLS {
  readonly hosts?: readonly string[];
  readonly secretName?: string;
}

/** networking.k8s.io/v1 Ingress. */
export interface Ingress {
  readonly apiVersion?: string;
  readonly kind?: 'Ingress';
  readonly metadata: ObjectMeta;
  readonly spec?: {
    readonly ingressClassName?: string;
    readonly defaultBackend?: IngressBackend;
    readonly rules?: readonly IngressRule[];
    readonly tls?: readonly IngressTLS[];
  };
}

/** networking.k8s.io/v1 IngressClass; the default class carries IS_DEFAULT_CLASS_ANNOTATION. */
export interface IngressClass {
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly controller?: string };
}

/** The annotation that makes an IngressClass the default for Ingresses that name none. */
export const IS_DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

/** The annotation older Ingresses use instead of spec.ingressClassName. */
export const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** v1 ServicePort: `targetPort` by number or by a container port's name. */
export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  readonly targetPort?: number | string;
  readonly protocol?: string;
  /** `https` and `kubernetes.io/h2c` choose the upstream scheme; anything else is plain HTTP/1.1. */
  readonly appProtocol?: string;
}

/** v1 Service. */
export interface Service {
  readonly metadata: ObjectMeta;
  readonly spec?: {
    readonly type?: string;
    readonly ports?: readonly ServicePort[];
  };
}

/** The label an EndpointSlice carries naming its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** discovery.k8s.io/v1 Endpoint: conditions left out mean ready, as the API documents. */
export interface Endpoint {
  readonly addresses: readonly string[];
  readonly conditions?: {
    readonly ready?: boolean;
    readonly serving?: boolean;
    readonly terminating?: boolean;
  };
}

/** discovery.k8s.io/v1 EndpointPort: named as the Service port it serves, the target port resolved. */
export interface EndpointPort {
  readonly name?: string;
  readonly port?: number;
  readonly protocol?: string;
}

/** discovery.k8s.io/v1 EndpointSlice. */
export interface EndpointSlice {
  readonly metadata: ObjectMeta;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly endpoints?: readonly Endpoint[];
  readonly ports?: readonly EndpointPort[];
}

/**
 * v1 Secret (a certificate's is of type `kubernetes.io/tls` with `tls.crt` and `tls.key`): `data`
 * values are base64, as the API returns them; the route source reads them decoded through
 * ReadSecret (secret-refs.ts). Never logged or copied to status.
 */
export interface Secret {
  readonly metadata: ObjectMeta;
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** gateway.networking.k8s.io/v1 GatewayClass. */
export interface GatewayClass {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly controllerName: string };
}

/** A reference to a Secret (or another object) in a Gateway listener's TLS. */
export interface SecretObjectReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
}

/** gateway.networking.k8s.io/v1 Listener. */
export interface Listener {
  readonly name: string;
  readonly hostname?: string;
  readonly port: number;
  readonly protocol: string;
  readonly tls?: {
    readonly mode?: 'Terminate' | 'Passthrough';
    readonly certificateRefs?: readonly SecretObjectReference[];
  };
  readonly allowedRoutes?: {
    readonly namespaces?: { readonly from?: 'All' | 'Same' | 'Selector' };
    readonly kinds?: readonly { readonly group?: string; readonly kind: string }[];
  };
}

/** gateway.networking.k8s.io/v1 Gateway. */
export interface Gateway {
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly gatewayClassName: string;
    readonly listeners: readonly Listener[];
  };
}

/** gateway.networking.k8s.io/v1 ParentReference. */
export interface ParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

/** gateway.networking.k8s.io/v1 HTTPPathMatch; the type defaults to PathPrefix and the value to `/`. */
export interface HTTPPathMatch {
  readonly type?: 'Exact' | 'PathPrefix' | 'RegularExpression';
  readonly value?: string;
}

/** gateway.networking.k8s.io/v1 HTTPRouteMatch. */
export interface HTTPRouteMatch {
  readonly path?: HTTPPathMatch;
  readonly headers?: readonly { readonly type?: string; readonly name: string; readonly value: string }[];
  readonly queryParams?: readonly { readonly type?: string; readonly name: string; readonly value: string }[];
  readonly method?: string;
}

/** gateway.networking.k8s.io/v1 HTTPHeader. */
export interface HTTPHeader {
  readonly name: string;
  readonly value: string;
}

/** gateway.networking.k8s.io/v1 HTTPHeaderFilter. */
export interface HTTPHeaderFilter {
  readonly set?: readonly HTTPHeader[];
  readonly add?: readonly HTTPHeader[];
  readonly remove?: readonly string[];
}

/** gateway.networking.k8s.io/v1 HTTPPathModifier. */
export interface HTTPPathModifier {
  readonly type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  readonly replaceFullPath?: string;
  readonly replacePrefixMatch?: string;
}

/** gateway.networking.k8s.io/v1 HTTPRouteFilter (the kinds read here; others are refused by type). */
export interface HTTPRouteFilter {
  readonly type: string;
  readonly requestHeaderModifier?: HTTPHeaderFilter;
  readonly responseHeaderModifier?: HTTPHeaderFilter;
  readonly urlRewrite?: { readonly hostname?: string; readonly path?: HTTPPathModifier };
  readonly requestRedirect?: {
    readonly scheme?: string;
    readonly hostname?: string;
    readonly path?: HTTPPathModifier;
    readonly port?: number;
    readonly statusCode?: number;
  };
}

/** gateway.networking.k8s.io/v1 HTTPBackendRef: a Service port with an optional weight (default 1). */
export interface HTTPBackendRef {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly port?: number;
  readonly weight?: number;
  readonly filters?: readonly HTTPRouteFilter[];
}

/** gateway.networking.k8s.io/v1 HTTPRouteRule. */
export interface HTTPRouteRule {
  readonly name?: string;
  readonly matches?: readonly HTTPRouteMatch[];
  readonly filters?: readonly HTTPRouteFilter[];
  readonly backendRefs?: readonly HTTPBackendRef[];
}

/** gateway.networking.k8s.io/v1 HTTPRoute. */
export interface HTTPRoute {
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly parentRefs?: readonly ParentReference[];
    readonly hostnames?: readonly string[];
    readonly rules?: readonly HTTPRouteRule[];
  };
}
