import { sharedCli } from '../support/cli-process';

// Root hooks of the system layer (test/system/.mocharc.json): the CLI is bundled once, before the
// first suite, for every suite that starts it (they take it from sharedCli()).
export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(120_000);
    await sharedCli();
  },
};
