import type { CommandHandlers, CommandId } from '../commands/command-table';
import type { Services } from './services';

/**
 * What a feature folder (run/, restore/, review/, timeline/) gives activation: what to dispose, and
 * the handlers of its rows of the command table (commands/ registers every row in one place).
 */
export interface Feature<K extends CommandId = CommandId> {
  readonly commands: CommandHandlers<K>;
  dispose(): void;
}

/** The one shape of every feature folder's `register`: the window's services in, the feature out. */
export type Register<F extends Feature<never>> = (window: Services) => F;
