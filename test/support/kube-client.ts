import { Agent, request as httpsRequest } from 'node:https';
import { waitFor } from './wait.js';

/** What names one Kubernetes object: its type (apiVersion, kind) and name (namespace for namespaced kinds). */
export interface KubeRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

/** An object as the API server returns it: a KubeRef plus whatever else it holds. */
export type KubeObject = KubeRef & Record<string, unknown>;

/** An answer from the API server other than 2xx: `status` is the HTTP status, `message` the Status message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: unknown,
  ) {
    const message = (body as { message?: unknown } | undefined)?.message;
    super(`${method} ${path}: ${status}${typeof message === 'string' ? ` ${message}` : ''}`);
  }
}

/** One resource of a discovery document (`GET /apis/<group>/<version>`). */
interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/**
 * A small JSON client for the test API server (node:https, bearer token, the server's CA): enough
 * to set up objects and assert on them. It is test support, not the product's client; the
 * product talks to Kubernetes through its own watcher. `close()` ends its keep-alive sockets.
 */
export interface KubeClient {
  /** One request; resolves with the status and parsed JSON body whatever the status. */
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: unknown }>;
  /** Server-side apply (field manager `portcullis-tests`, forced): creates or updates; resolves with the stored object. */
  apply<T extends KubeObject>(object: T): Promise<T>;
  /** The object, or a KubeApiError (404 when it does not exist, 403 when this identity may not read it). */
  get(ref: KubeRef): Promise<KubeObject>;
  /**
   * Deletes the object; a missing object is a KubeApiError 404 unless `ignoreMissing`. The test
   * cluster runs no controller manager, so nothing garbage-collects dependents or finishes a
   * namespace's deletion.
   */
  delete(ref: KubeRef, options?: { ignoreMissing?: boolean }): Promise<void>;
  /** The objects of `ref`'s kind in its namespace (all namespaces when none). */
  list(ref: Pick<KubeRef, 'apiVersion' | 'kind'> & { namespace?: string }): Promise<KubeObject[]>;
  /**
   * Polls `get(ref)` until `predicate` holds (a missing object counts as "not yet") and returns the
   * object; after `timeoutMs` (default 30 s) it fails naming `what` and the last answer.
   */
  waitFor(
    ref: KubeRef,
    predicate: (object: KubeObject) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<KubeObject>;
  /**
   * The collection path of a kind from discovery: `/apis/<group>/<version>[/namespaces/<ns>]/<plural>`
   * (`/api/v1/...` for the core group); without `namespace`, every namespace's.
   */
  collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string>;
  close(): void;
}

/** A client for the API server at `url` (https) trusting `caPem`, sending `token` as its bearer token. */
export function kubeClient(url: string, caPem: string, token: string): KubeClient {
  const agent = new Agent({ ca: caPem, keepAlive: true });
  // Per client, so a kind a CRD adds later is found by asking discovery again on a miss.
  const discovery = new Map<string, readonly DiscoveredResource[]>();

  const request: KubeClient['request'] = (method, path, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = httpsRequest(
        new URL(path, url),
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload === undefined
              ? {}
              : { 'content-type': contentType, 'content-length': payload.length }),
          },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              // Not JSON (/readyz answers text): the text itself.
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });

  /** The body of a 2xx answer, or a KubeApiError. */
  async function call(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    const answer = await request(method, path, body, contentType);
    if (answer.status < 200 || answer.status > 299)
      throw new KubeApiError(answer.status, method, path, answer.body);
    return answer.body;
  }

  async function resources(apiVersion: string, refresh: boolean): Promise<readonly DiscoveredResource[]> {
    const known = discovery.get(apiVersion);
    if (known !== undefined && !refresh) return known;
    const answer = await request('GET', groupVersionPath(apiVersion));
    const found =
      answer.status === 200 ? ((answer.body as { resources?: DiscoveredResource[] }).resources ?? []) : [];
    discovery.set(apiVersion, found);
    return found;
  }

  async function resourceOf(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    // Subresources (`pods/status`) share the kind; the collection is the one without a slash.
    const pick = (list: readonly DiscoveredResource[]): DiscoveredResource | undefined =>
      list.find((resource) => resource.kind === kind && !resource.name.includes('/'));
    const resource = pick(await resources(apiVersion, false)) ?? pick(await resources(apiVersion, true));
    if (resource === undefined) {
      throw new Error(
        `the API server serves no kind ${kind} in ${apiVersion} (is its CRD applied and Established?)`,
      );
    }
    return resource;
  }

  const collectionPath: KubeClient['collectionPath'] = async (apiVersion, kind, namespace) => {
    const resource = await resourceOf(apiVersion, kind);
    const base = groupVersionPath(apiVersion);
    if (!resource.namespaced || namespace === undefined) return `${base}/${resource.name}`;
    return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.name}`;
  };

  async function objectPath(ref: KubeRef): Promise<string> {
    const { name, namespace } = ref.metadata;
    if (namespace === undefined && (await resourceOf(ref.apiVersion, ref.kind)).namespaced) {
      throw new Error(`${ref.kind} ${name} is namespaced: give metadata.namespace`);
    }
    return `${await collectionPath(ref.apiVersion, ref.kind, namespace)}/${encodeURIComponent(name)}`;
  }

  const client: KubeClient = {
    request,
    collectionPath,
    async apply<T extends KubeObject>(object: T): Promise<T> {
      // JSON is YAML, so the apply patch is the object as JSON.
      const path = `${await objectPath(object)}?fieldManager=portcullis-tests&force=true`;
      return (await call('PATCH', path, object, 'application/apply-patch+yaml')) as T;
    },
    async get(ref) {
      return (await call('GET', await objectPath(ref))) as KubeObject;
    },
    async delete(ref, options = {}) {
      try {
        await call('DELETE', await objectPath(ref));
      } catch (err) {
        if (!(options.ignoreMissing === true && err instanceof KubeApiError && err.status === 404)) throw err;
      }
    },
    async list(ref) {
      const path = await collectionPath(ref.apiVersion, ref.kind, ref.namespace);
      return ((await call('GET', path)) as { items: KubeObject[] }).items;
    },
    async waitFor(ref, predicate, what, timeoutMs = 30_000) {
      return waitFor(
        async () => {
          const object = await client.get(ref);
          return predicate(object) ? object : false;
        },
        { what, timeoutMs, intervalMs: 100 },
      );
    },
    close() {
      agent.destroy();
    },
  };

  return client;
}

/** `/api/v1` for the core group's `v1`, `/apis/<group>/<version>` for the others. */
function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** Whether `object.status.conditions` has `type` with status "True" (Established, Ready, ...). */
export function hasCondition(object: KubeObject, type: string): boolean {
  const conditions = (object['status'] as { conditions?: { type?: string; status?: string }[] } | undefined)
    ?.conditions;
  return (conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');
}
