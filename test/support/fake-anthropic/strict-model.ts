import { toParams } from '../../../src/core/model/anthropic';
import { ModelError, type ModelProvider } from '../../../src/core/model/provider';
import { validateRequest, type RuleBreach, type RuleOptions } from './rules';

export type StrictModel<T extends ModelProvider> = T & { readonly refused: RuleBreach[] };

/**
 * An in-process model held to the same Messages API rules as the fake server: the request body
 * the Anthropic provider would send is checked first, and a breach is the 400 the API answers
 * (a `bad_request` ModelError naming the rule), never a reply.
 */
export function strictModel<T extends ModelProvider>(model: T, options: RuleOptions = {}): StrictModel<T> {
  const refused: RuleBreach[] = [];
  const complete: ModelProvider['complete'] = (request, onEvent) => {
    const broken = validateRequest({ ...toParams(request), stream: true }, options);
    if (broken) {
      refused.push(broken);
      return Promise.reject(new ModelError(`Anthropic API bad_request (400): ${broken.message}`, 'bad_request', 400));
    }
    return model.complete(request, onEvent);
  };
  return { ...model, complete, refused };
}
