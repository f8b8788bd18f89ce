/**
 * One help shape for every command (config/flags.ts, commandHelp): the usage line, the
 * description, examples when given, every declared flag (and -h, --help) in one style with the
 * variable it reads, then the notes.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/command.js';
import { envName } from '../../src/config/flags.js';

const MODULES: Readonly<Record<string, () => Promise<{ command: Command }>>> = {
  serve: () => import('../../src/cli/serve.js'),
  review: () => import('../../src/cli/review.js'),
  check: () => import('../../src/cli/check.js'),
  audit: () => import('../../src/cli/audit.js'),
  'crd-patch': () => import('../../src/cli/crd-patch.js'),
  certs: () => import('../../src/cli/certs.js'),
  policy: () => import('../../src/cli/policy.js'),
  verify: () => import('../../src/cli/verify.js'),
  disarm: () => import('../../src/cli/disarm.js'),
};

async function helpOf(command: Command): Promise<string[]> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const io = { stdin: Readable.from([]), stdout, stderr: new PassThrough(), env: {}, cwd: process.cwd() };
  expect(await command.main(['--help'], io)).toBe(0);
  await new Promise((r) => setImmediate(r));
  return Buffer.concat(chunks).toString('utf8').replace(/\n$/, '').split('\n');
}

describe.each(Object.keys(MODULES))('%s --help', (name) => {
  it('has the one shape: usage, description, examples, flags, notes', async () => {
    const { command } = await MODULES[name]!();
    const lines = await helpOf(command);
    expect(lines[0]).toMatch(new RegExp(`^Usage: routability-webhook ${name} \\S`));
    expect(lines[1]).toBe('');
    expect(lines[2]).not.toBe('');
    const flagsAt = lines.indexOf('Flags:');
    expect(flagsAt).toBeGreaterThan(2);
    expect(lines[flagsAt - 1]).toBe('');
    const examplesAt = lines.indexOf('Examples:');
    if (examplesAt >= 0) {
      expect(examplesAt).toBeLessThan(flagsAt);
      expect(lines[examplesAt + 1]).toMatch(/^ {2}\S/);
    }
    // The flags: a line naming each, then its description, to the blank line before the notes.
    const end = lines.indexOf('', flagsAt);
    const table = lines.slice(flagsAt + 1, end === -1 ? undefined : end);
    expect(table.length % 2).toBe(0);
    const listed: string[] = [];
    for (let i = 0; i < table.length; i += 2) {
      const flag = /^ {2}(?:-\w, | {4})--([a-z][a-z0-9-]*)(?: \S+)?$/.exec(table[i]!);
      expect(flag, table[i]).not.toBeNull();
      const flagName = flag![1]!;
      listed.push(flagName);
      const def = command.flags[flagName];
      const description = table[i + 1]!;
      expect(description).toMatch(/^ {8}\S/);
      if (def && !def.noEnv) expect(description).toMatch(new RegExp(`\\[env ${envName(flagName)}\\]$`));
      else expect(description).not.toMatch(/ROUTABILITY_WEBHOOK_/);
      if (def?.short) expect(table[i]).toMatch(new RegExp(`^ {2}-${def.short}, --${flagName}`));
    }
    const declared = Object.keys(command.flags);
    expect(listed).toEqual(declared.includes('help') ? declared : [...declared, 'help']);
    if (end !== -1) expect(lines[end + 1]).toMatch(/^\S/);
  });
});
