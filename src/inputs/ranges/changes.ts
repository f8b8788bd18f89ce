/** Listeners of a change (the ranges or the revision in force): subscribe, and tell them all. */
export interface ChangeListeners {
  /** Adds `listener`; returns its unsubscribe. */
  add(listener: () => void): () => void;
  emit(): void;
}

export function changeListeners(): ChangeListeners {
  const listeners = new Set<() => void>();
  return {
    add: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: () => {
      for (const listener of [...listeners]) listener();
    },
  };
}
