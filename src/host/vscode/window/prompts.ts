import * as vscode from 'vscode';

export type MessageKind = 'info' | 'warning' | 'error';

export interface MessageOptions {
  readonly modal?: boolean;
  readonly detail?: string;
}

/**
 * Every question or message the extension puts in front of a person. The VS Code
 * implementation is the default; host tests swap in a scripted one through the extension API.
 */
export interface Prompts {
  inputBox(options: vscode.InputBoxOptions): Promise<string | undefined>;
  quickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<T | undefined>;
  /** Shows a message; resolves with the chosen action, or undefined when dismissed. */
  message(kind: MessageKind, text: string, options: MessageOptions, ...actions: string[]): Promise<string | undefined>;
}

export const vscodePrompts: Prompts = {
  inputBox: async (options) => vscode.window.showInputBox(options),
  quickPick: async <T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions) =>
    vscode.window.showQuickPick([...items], options),
  message: async (kind, text, options, ...actions) => {
    const show =
      kind === 'error'
        ? vscode.window.showErrorMessage
        : kind === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const messageOptions: vscode.MessageOptions = {
      modal: options.modal ?? false,
      ...(options.detail !== undefined ? { detail: options.detail } : {}),
    };
    return show(text, messageOptions, ...actions);
  },
};

/** Prompts that can be replaced at run time (tests) while every holder keeps the same object. */
export class SwitchablePrompts implements Prompts {
  private current: Prompts = vscodePrompts;

  use(prompts: Prompts | undefined): void {
    this.current = prompts ?? vscodePrompts;
  }

  /** Scripted prompts stand in for VS Code's (host tests): every question goes to them. */
  get replaced(): boolean {
    return this.current !== vscodePrompts;
  }

  inputBox(options: vscode.InputBoxOptions): Promise<string | undefined> {
    return this.current.inputBox(options);
  }

  quickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<T | undefined> {
    return this.current.quickPick(items, options);
  }

  message(kind: MessageKind, text: string, options: MessageOptions, ...actions: string[]): Promise<string | undefined> {
    return this.current.message(kind, text, options, ...actions);
  }
}
