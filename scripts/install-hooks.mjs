// `npm install` / `npm ci` in a clone (the `prepare` script): points git at .githooks, so the
// pre-commit formatting check and the commit-msg subject cap run without anyone opting in. It does nothing in a copy that is not
// the top of a git checkout (a tarball, `git archive`, the image build), on CI, or when the clone
// already has a hooks folder of its own (core.hooksPath set to something else: left as it is).
// It never fails the install.
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';

function git(...args) {
  try {
    return execFileSync('git', args, { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return undefined; // no git, not a checkout, or (config --get) not set
  }
}

function install() {
  if (process.env.CI || !existsSync('.githooks/pre-commit')) return;
  const top = git('rev-parse', '--show-toplevel');
  if (!top || realpathSync(top) !== realpathSync(process.cwd())) return;
  const current = git('config', '--get', 'core.hooksPath');
  if (current === '.githooks') return;
  if (current) {
    console.log(
      `hooks: core.hooksPath is ${current}; the formatting check and subject cap are not installed (npm run hooks:install)`,
    );
    return;
  }
  if (git('config', 'core.hooksPath', '.githooks') !== undefined)
    console.log(
      'hooks: pre-commit formatting check and commit-msg subject cap installed (.githooks; git commit --no-verify skips them)',
    );
}

install();
