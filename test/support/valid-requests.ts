import type { FakeAnthropic } from './fake-anthropic/server';
import { validateRequest } from './fake-anthropic/rules';

/**
 * Throws naming the request and the rule when any request the fake received breaks the Messages
 * API's rules (rules.ts): refused by the fake on the way, or breaking one when checked again.
 */
export function assertEveryRequestValid(fake: FakeAnthropic): void {
  const refused = fake.refused[0];
  if (refused) throw new Error(`request ${refused.index} was refused (${refused.rule}): ${refused.message}`);
  fake.requests.forEach((request, n) => {
    const account = request.apiKeySeen;
    const breach = validateRequest(request.body, { ledger: fake.ledger, ...(account !== undefined ? { account } : {}) });
    if (breach) throw new Error(`request ${n} breaks ${breach.rule}: ${breach.message}`);
  });
}
