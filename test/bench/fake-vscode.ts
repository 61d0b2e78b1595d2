// The few pieces of the `vscode` module the window's feed, context keys and review model use, for
// bench:window in plain Node (no editor): an event emitter, disposables, setContext recorded.

type Listener<T> = (event: T) => void;

export class Disposable {
  constructor(private readonly off: () => void) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.off();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(event: T): void {
    for (const listener of [...this.listeners]) listener(event);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

/** The `when`-clause keys set so far. */
export const contextKeys = new Map<string, unknown>();

export const commands = {
  executeCommand: async (command: string, ...args: unknown[]): Promise<unknown> => {
    if (command === 'setContext') contextKeys.set(String(args[0]), args[1]);
    return undefined;
  },
};
