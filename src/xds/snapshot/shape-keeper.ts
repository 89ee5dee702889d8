import type { ProtoObject } from '../codec/codec.js';

/**
 * Keeps a bounded sample of recently encoded messages alive, so that V8 keeps their hidden classes
 * (object shapes). Compile's resources build their messages when read and keep none (see
 * LazyResource), so after a full collection no message of a build is left, V8 frees the shapes,
 * and the next build makes them again from scratch. Measured on a cold build of 1,000 routes after
 * a full collection: the snapshot stage took 10-31 ms (median ~17) instead of 10-11, its encoder
 * running slowly while the new shapes settle. One kept message per shape is enough, and messages
 * of a type mostly share a few shapes, so a small ring of them per type (the first lazily built
 * message of each encoding batch) costs a few hundred kilobytes at most, whatever the route count.
 */
export class ShapeKeeper {
  readonly #ring: (ProtoObject | undefined)[];
  #next = 0;

  constructor(size: number) {
    this.#ring = new Array<ProtoObject | undefined>(size).fill(undefined);
  }

  /** Keeps `message`, letting go of the oldest one kept. */
  keep(message: ProtoObject): void {
    this.#ring[this.#next] = message;
    this.#next = (this.#next + 1) % this.#ring.length;
  }

  /** How many messages are kept (for tests). */
  get size(): number {
    return this.#ring.filter((message) => message !== undefined).length;
  }
}
