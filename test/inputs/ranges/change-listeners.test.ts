/**
 * The listeners told when the ranges or the revision in force change
 * (src/inputs/ranges/changes.ts): the rule inputs and the policy parameters
 * subscribe there, and some of them subscribe or unsubscribe others while
 * being told.
 */
import { describe, expect, it } from 'vitest';
import { changeListeners } from '../../../src/inputs/ranges/changes.js';

describe('change listeners', () => {
  it('tells every listener once per change, in the order they subscribed', () => {
    const changes = changeListeners();
    const told: string[] = [];
    changes.add(() => told.push('a'));
    changes.add(() => told.push('b'));
    changes.emit();
    changes.emit();
    expect(told).toEqual(['a', 'b', 'a', 'b']);
  });

  it('stops telling a listener once it unsubscribed, and keeps telling the others', () => {
    const changes = changeListeners();
    const told: string[] = [];
    const stopA = changes.add(() => told.push('a'));
    changes.add(() => told.push('b'));
    stopA();
    changes.emit();
    expect(told).toEqual(['b']);
  });

  // The change is told to the listeners there were when it happened: one
  // subscribed while it is being told hears of the next change, and one
  // unsubscribed while it is being told still hears of this one (iterating the
  // live set would do both the other way round).
  it('a listener subscribed during a change is told from the next change on', () => {
    const changes = changeListeners();
    const told: string[] = [];
    let added = false;
    changes.add(() => {
      told.push('a');
      if (!added) {
        added = true;
        changes.add(() => told.push('late'));
      }
    });
    changes.emit();
    expect(told).toEqual(['a']);
    changes.emit();
    expect(told).toEqual(['a', 'a', 'late']);
  });

  it('a listener unsubscribed by another during a change still hears of that change, not of the next', () => {
    const changes = changeListeners();
    const told: string[] = [];
    let stopB = (): void => {};
    changes.add(() => {
      told.push('a');
      stopB();
    });
    stopB = changes.add(() => told.push('b'));
    changes.emit();
    changes.emit();
    expect(told).toEqual(['a', 'b', 'a']);
  });
});
