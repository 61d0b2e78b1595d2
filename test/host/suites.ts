import { activationSuite } from './suite/activation.test';

/**
 * Every host suite, in order. Each file exports a function that calls describe/it, because the
 * bundle evaluates imports before mocha has put describe/it on the global object.
 */
export const HOST_SUITES: ReadonlyArray<() => void> = [activationSuite];
