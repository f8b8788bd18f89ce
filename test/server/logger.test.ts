/** serve's logger (src/server/logger.ts): its level from --log-level, and every line naming the app. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/server/logger.js';

describe('createLogger', () => {
  it.each(['debug', 'info', 'warn', 'error'] as const)(
    'logs at --log-level %s, each line naming the app',
    (level) => {
      const logger = createLogger({ logLevel: level, dev: false });
      expect(logger.level).toBe(level);
      expect(logger.bindings()).toEqual({ app: 'routability-webhook' });
    },
  );
});
