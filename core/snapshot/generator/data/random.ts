// The generator's seeded randomness: an sfc32 stream per purpose, weighted tables drawn by binary search,
// and a bijective 32-bit mix that turns counters into unique, random-looking identifiers.

/** murmur3's 32-bit finalizer: a bijection on 32-bit integers, so distinct inputs give distinct outputs. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Eight lowercase hex digits. */
export function hex8(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/** sfc32 (Chris Doty-Humphrey's small fast counter), seeded through splitmix32 from a seed and a stream name. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream: string) {
    let s = (seed >>> 0) ^ 0x9e3779b9;
    for (let i = 0; i < stream.length; i += 1) s = Math.imul(s ^ stream.charCodeAt(i), 0x01000193) >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      return mix32(s);
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = 1;
    for (let i = 0; i < 15; i += 1) this.u32();
  }

  /** Uniform unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** In-place Fisher–Yates shuffle. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      const a = items[i];
      const b = items[j];
      if (a === undefined || b === undefined) continue;
      items[i] = b;
      items[j] = a;
    }
    return items;
  }
}

/** Items with weights, drawn in O(log n). */
export class Weighted<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;
  private readonly total: number;

  constructor(entries: readonly (readonly [T, number])[]) {
    if (entries.length === 0) throw new Error('a weighted table needs at least one entry');
    this.items = entries.map(([item]) => item);
    this.cumulative = new Float64Array(entries.length);
    let sum = 0;
    entries.forEach(([, weight], i) => {
      sum += weight;
      this.cumulative[i] = sum;
    });
    this.total = sum;
  }

  /** Zipf-like weights by rank: the first item is the most frequent. */
  static zipf<T>(items: readonly T[], exponent: number, offset = 1): Weighted<T> {
    return new Weighted(items.map((item, rank) => [item, 1 / Math.pow(rank + offset, exponent)] as const));
  }

  indexOf(rng: Rng): number {
    const target = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  draw(rng: Rng): T {
    const item = this.items[this.indexOf(rng)];
    if (item === undefined) throw new Error('weighted draw out of range');
    return item;
  }
}

/** Lowercase ASCII letters only: `Côté` → `cote`, `O'Brien` → `obrien`. For e-mail local parts and slugs. */
export function asciiSlug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z]/g, '');
}
