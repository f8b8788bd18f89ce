/** A flag error names the command and points at its --help (cli/command.ts, helpHint). */
import { describe, expect, it } from 'vitest';
import { runCli } from '../kit/server-process.js';

describe('a usage error', () => {
  it.each(['check', 'audit', 'verify', 'disarm'])('of %s ends with where its help is', async (name) => {
    const { code, stderr } = await runCli([name, '--bogus']);
    expect(code).toBe(2);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^routability-webhook ${name}: Unknown option '--bogus'`));
    expect(lines[1]).toBe(`Run \`routability-webhook ${name} --help\` for usage.`);
  });
});
