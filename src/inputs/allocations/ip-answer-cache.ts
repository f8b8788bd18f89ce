/**
 * The allocated-IP lookup's answer cache: a few answers reused for a short
 * time (an IP freed or taken shows within the TTL), least recently used
 * dropped first, so its memory is bounded whatever the cluster's size.
 */
import type { IPAddressHolder } from '../../rules/index.js';

/** What a GET said of an address: someone holds it, or nobody does. */
export type KnownAllocation =
  { readonly kind: 'held'; readonly holder: IPAddressHolder } | { readonly kind: 'free' };

export class AnswerCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly entries = new Map<
    string,
    { readonly answer: KnownAllocation; readonly expires: number }
  >();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number,
  ) {}

  get(ip: string): KnownAllocation | undefined {
    const hit = this.entries.get(ip);
    if (!hit) return undefined;
    this.entries.delete(ip);
    if (hit.expires <= this.now()) return undefined;
    this.entries.set(ip, hit);
    return hit.answer;
  }

  set(ip: string, answer: KnownAllocation): void {
    this.entries.delete(ip);
    this.entries.set(ip, { answer, expires: this.now() + this.ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }

  describe(): { entries: number; max: number; ttlSeconds: number } {
    return { entries: this.entries.size, max: this.max, ttlSeconds: this.ttlMs / 1000 };
  }
}
