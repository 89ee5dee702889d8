import type { CompiledResource } from '../../proto/compiled.js';
import type { ResourceType } from '../../proto/type-urls.js';

/**
 * A compiled resource as a compile memo keeps it between builds: the same name and content key,
 * and in place of its message the input and the pure compile step (`make`, a module function, so
 * no closure per resource) that made it, run again on each read of `message`. The next build's
 * check and snapshot take an unchanged resource by its content key (consistency.ts,
 * build-snapshot.ts) and never read its message, so a kept build holds no compiled message (at
 * 10,000 routes about 55 MB of plain objects whose bytes the encode cache already holds); a
 * reader that does read one gets an equal message (compile is pure), at the cost of compiling it
 * again. `message` is a getter on the prototype: a spread copy of one has no message.
 */
export class KeptResource<T extends ResourceType, I> implements CompiledResource<T> {
  constructor(
    readonly name: string,
    readonly contentKey: string,
    private readonly input: I,
    private readonly make: (input: I) => CompiledResource<T>['message'],
  ) {}

  get message(): CompiledResource<T>['message'] {
    return this.make(this.input);
  }
}

/**
 * `resource` in its kept form (see `KeptResource`), made again as `make(input)`; a resource
 * without a content key as it is (it can only be reused by its message).
 */
export function kept<T extends ResourceType, I>(
  resource: CompiledResource<T>,
  input: I,
  make: (input: I) => CompiledResource<T>['message'],
): CompiledResource<T> {
  const { name, contentKey } = resource;
  return contentKey === undefined ? resource : new KeptResource(name, contentKey, input, make);
}
