/**
 * Which connection the guard closes at the cap to make room for a new one
 * (src/http/connections.ts): stalled handshakes first, then long-idle
 * connections, then the oldest handshake, then the idlest; never a busy one.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { evictionFor, type Tracked } from '../../src/http/connections.js';

let sockets = 0;
function conn(state: Tracked['state'], since: number, busy = 0): Tracked {
  return { raw: { id: sockets++ } as unknown as Socket, state, busy, since };
}

const NOW = 100_000;

describe('evictionFor', () => {
  it('closes a handshake stalled over 2 s before anything else, even a long-idle connection', () => {
    const idle = conn('established', NOW - 60_000);
    const fresh = conn('handshaking', NOW - 100);
    const stalled = conn('waiting', NOW - 2_001);
    expect(evictionFor([idle, fresh, stalled], NOW)).toEqual({
      reason: 'evicted-handshake',
      victim: stalled,
    });
  });

  it('then a connection idle over 10 s, the idlest one', () => {
    const handshake = conn('handshaking', NOW - 500);
    const idle = conn('established', NOW - 10_001);
    const idler = conn('established', NOW - 30_000);
    expect(evictionFor([handshake, idle, idler], NOW)).toEqual({ reason: 'evicted-idle', victim: idler });
  });

  it('then the oldest handshake of any age, before a recently idle connection', () => {
    const recentIdle = conn('established', NOW - 5_000);
    const older = conn('waiting', NOW - 1_500);
    const newer = conn('handshaking', NOW - 10);
    expect(evictionFor([recentIdle, older, newer], NOW)).toEqual({
      reason: 'evicted-handshake',
      victim: older,
    });
  });

  it('then the idlest connection, however briefly idle', () => {
    const a = conn('established', NOW - 2_000);
    const b = conn('established', NOW - 3_000);
    expect(evictionFor([a, b], NOW)).toEqual({ reason: 'evicted-idle', victim: b });
  });

  it('never a connection answering a request: nothing when all are busy', () => {
    const busy = conn('established', NOW - 60_000, 1);
    expect(evictionFor([busy, conn('established', NOW - 90_000, 2)], NOW)).toBeUndefined();
    const idle = conn('established', NOW - 1);
    expect(evictionFor([busy, idle], NOW)).toEqual({ reason: 'evicted-idle', victim: idle });
    expect(evictionFor([], NOW)).toBeUndefined();
  });

  it('at exactly 2 s a handshake is not yet stalled, at exactly 10 s idle not yet long-idle', () => {
    const handshake = conn('handshaking', NOW - 2_000);
    const idle = conn('established', NOW - 10_000);
    // Neither threshold passed: the oldest handshake goes before the idle connection.
    expect(evictionFor([idle, handshake], NOW)).toEqual({ reason: 'evicted-handshake', victim: handshake });
  });
});

describe('evictionFor at its boundaries', () => {
  it('a handshake of exactly 2 s is not stalled: a connection idle over 10 s goes before it', () => {
    const handshake = conn('handshaking', NOW - 2_000);
    const idle = conn('established', NOW - 10_001);
    expect(evictionFor([handshake, idle], NOW)).toEqual({ reason: 'evicted-idle', victim: idle });
  });

  it('of two connections idle since the same moment, the one accepted first goes', () => {
    const first = conn('established', NOW - 3_000);
    const second = conn('established', NOW - 3_000);
    expect(evictionFor([first, second], NOW)).toEqual({ reason: 'evicted-idle', victim: first });
  });
});
