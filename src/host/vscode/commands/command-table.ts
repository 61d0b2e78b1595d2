// Every command the extension contributes, in one table: its palette title and icon, when it is
// enabled and shown, its editor-title and Timeline menu places, and its keys. package.json's
// `contributes` (commands, menus, keybindings) is this table written out: contributesOf() makes
// it, and test/unit/host/command-table.test.ts compares the two. No vscode import, so plain Node
// tests read it; the activation test checks every command here is registered. A row that takes an
// argument names its schema (`arg`, command-args.ts): the argument is parsed where the command enters.

import type { z } from 'zod';
import { HunkRefArg, PatchPickArg, PatchRefArg, RestoreArg, ResumeArg, RunArg, RunIdArg, RunRefArg } from './command-args';

export interface CommandEntry {
  readonly title: string;
  /** A codicon name. */
  readonly icon?: string;
  readonly enablement?: string;
  /** When the command shows in the Command Palette (absent: always). */
  readonly palette?: string;
  readonly editorTitle?: { readonly when: string; readonly group: string };
  /** Its place in a view's title bar. */
  readonly viewTitle?: { readonly when: string; readonly group: string };
  /** When it shows in the Timeline webview's context menu. */
  readonly webviewContext?: string;
  readonly keys?: readonly { readonly key: string; readonly mac?: string; readonly when: string }[];
  /** The schema of its argument (absent: the handler gets what it is given, or takes none). */
  readonly arg?: z.ZodType;
}

export const CATEGORY = 'Agent';

/** VS Code's own command that shows the Timeline view (made for every view; not contributed). */
export const TIMELINE_FOCUS = 'agentCheckpoints.timeline.focus';

export const COMMAND_TABLE = {
  'agentCheckpoints.run': { arg: RunArg, title: 'Run...', icon: 'play' },
  'agentCheckpoints.resume': { arg: ResumeArg, title: 'Resume...', icon: 'debug-continue', palette: '!agentCheckpoints.running' },
  'agentCheckpoints.cancel': {
    title: 'Stop Run',
    icon: 'debug-stop',
    enablement: 'agentCheckpoints.running',
    palette: 'agentCheckpoints.running',
  },
  'agentCheckpoints.setApiKey': { title: 'Set API Key', icon: 'key' },
  'agentCheckpoints.chooseModel': { title: 'Choose Model...', icon: 'sparkle' },
  'agentCheckpoints.revokeMcpServers': { title: 'Revoke MCP Server Permissions' },
  'agentCheckpoints.showLog': { title: 'Show Log', icon: 'output' },
  'agentCheckpoints.timeline.openInEditor': {
    title: 'Open Timeline in Editor',
    icon: 'link-external',
    viewTitle: { when: 'view == agentCheckpoints.timeline', group: 'navigation' },
  },
  'agentCheckpoints.restoreCheckpoint': {
    arg: RestoreArg,
    title: 'Restore Checkpoint...',
    icon: 'history',
    palette: 'agentCheckpoints.hasRuns && !agentCheckpoints.running',
  },
  'agentCheckpoints.rollbackPatchPick': {
    arg: PatchPickArg,
    title: 'Roll Back Patch...',
    icon: 'discard',
    palette: 'agentCheckpoints.hasPendingPatches && !agentCheckpoints.running',
  },
  'agentCheckpoints.undoRestore': {
    arg: RunIdArg,
    title: 'Undo Last Restore',
    icon: 'redo',
    palette: 'agentCheckpoints.canUndoRestore && !agentCheckpoints.running',
  },
  'agentCheckpoints.compareBranches': {
    title: 'Compare Branches...',
    icon: 'git-compare',
    palette: 'agentCheckpoints.hasRuns',
  },
  'agentCheckpoints.openDiff': {
    arg: PatchRefArg,
    title: 'Open Patch Diff',
    icon: 'diff',
    palette: 'agentCheckpoints.patchDiffActive',
    webviewContext: 'webview == agentCheckpoints.timeline && webviewSection == patch',
  },
  'agentCheckpoints.acceptPatch': {
    arg: PatchRefArg,
    title: 'Accept Patch',
    icon: 'check',
    palette: 'agentCheckpoints.patchDiffActive',
    editorTitle: { when: 'agentCheckpoints.patchDiffActive && isInDiffEditor', group: 'navigation' },
    webviewContext: 'webview == agentCheckpoints.timeline && webviewSection == patch',
  },
  'agentCheckpoints.rollbackPatch': {
    arg: PatchRefArg,
    title: 'Roll Back Patch',
    icon: 'discard',
    palette: 'agentCheckpoints.patchDiffActive',
    editorTitle: { when: 'agentCheckpoints.patchDiffActive && isInDiffEditor', group: 'navigation' },
    webviewContext: 'webview == agentCheckpoints.timeline && webviewSection == patch',
  },
  'agentCheckpoints.review.keepHunk': {
    arg: HunkRefArg,
    title: 'Keep Change Under Cursor',
    icon: 'check',
    palette: 'agentCheckpoints.review.activeHasChanges',
    keys: [{ key: 'ctrl+alt+y', mac: 'cmd+alt+y', when: 'editorTextFocus && agentCheckpoints.review.activeHasChanges' }],
  },
  'agentCheckpoints.review.undoHunk': {
    arg: HunkRefArg,
    title: 'Undo Change Under Cursor',
    icon: 'discard',
    palette: 'agentCheckpoints.review.activeHasChanges',
    keys: [{ key: 'ctrl+alt+backspace', mac: 'cmd+alt+backspace', when: 'editorTextFocus && agentCheckpoints.review.activeHasChanges' }],
  },
  'agentCheckpoints.review.keepFile': {
    title: 'Keep All Changes in File',
    icon: 'check-all',
    palette: 'agentCheckpoints.review.activeHasChanges',
    editorTitle: { when: 'agentCheckpoints.review.activeHasChanges', group: 'navigation@3' },
  },
  'agentCheckpoints.review.undoFile': {
    title: 'Undo All Changes in File',
    icon: 'discard',
    palette: 'agentCheckpoints.review.activeHasChanges',
    editorTitle: { when: 'agentCheckpoints.review.activeHasChanges', group: 'navigation@4' },
  },
  'agentCheckpoints.review.keepRun': {
    arg: RunRefArg,
    title: 'Keep All Agent Changes...',
    icon: 'check-all',
    palette: 'agentCheckpoints.review.hasChanges',
  },
  'agentCheckpoints.review.undoRun': {
    arg: RunRefArg,
    title: 'Undo All Agent Changes...',
    icon: 'discard',
    palette: 'agentCheckpoints.review.hasChanges',
  },
  'agentCheckpoints.review.next': {
    title: 'Next Agent Change',
    icon: 'arrow-down',
    palette: 'agentCheckpoints.review.hasChanges',
    editorTitle: { when: 'agentCheckpoints.review.activeHasChanges', group: 'navigation@2' },
    keys: [{ key: 'alt+f5', when: 'editorTextFocus && agentCheckpoints.review.hasChanges' }],
  },
  'agentCheckpoints.review.previous': {
    title: 'Previous Agent Change',
    icon: 'arrow-up',
    palette: 'agentCheckpoints.review.hasChanges',
    editorTitle: { when: 'agentCheckpoints.review.activeHasChanges', group: 'navigation@1' },
    keys: [{ key: 'shift+alt+f5', when: 'editorTextFocus && agentCheckpoints.review.hasChanges' }],
  },
} as const satisfies Record<string, CommandEntry>;

export type CommandId = keyof typeof COMMAND_TABLE;

export const COMMAND_IDS = Object.keys(COMMAND_TABLE) as CommandId[];

/** The argument of command `K` once parsed by its row's schema; `unknown` for a row without one (untrusted). */
export type CommandArg<K extends CommandId> = (typeof COMMAND_TABLE)[K] extends { readonly arg: infer S extends z.ZodType }
  ? z.output<S> | undefined
  : unknown;

/** What command `K` does with its argument. */
export type CommandHandler<K extends CommandId = CommandId> = (arg: CommandArg<K>) => unknown;

/** Handlers of some rows of the table; commands/index.ts registers the whole table from them, in one place. */
export type CommandHandlers<K extends CommandId = CommandId> = { readonly [P in K]: CommandHandler<P> };

interface MenuItem {
  readonly command: string;
  readonly when: string;
  readonly group?: string;
}

export interface CommandContributions {
  readonly commands: { command: string; title: string; category: string; icon?: string; enablement?: string }[];
  readonly menus: { commandPalette: MenuItem[]; 'editor/title': MenuItem[]; 'view/title': MenuItem[]; 'webview/context': MenuItem[] };
  readonly keybindings: { command: string; key: string; mac?: string; when: string }[];
}

/** The table as package.json's `contributes` writes it (in the table's order). */
export function contributesOf(table: Readonly<Record<string, CommandEntry>> = COMMAND_TABLE): CommandContributions {
  const entries = Object.entries(table);
  return {
    commands: entries.map(([command, e]) => ({
      command,
      title: e.title,
      category: CATEGORY,
      ...(e.icon !== undefined ? { icon: `$(${e.icon})` } : {}),
      ...(e.enablement !== undefined ? { enablement: e.enablement } : {}),
    })),
    menus: {
      commandPalette: entries.flatMap(([command, e]) => (e.palette !== undefined ? [{ command, when: e.palette }] : [])),
      'editor/title': entries.flatMap(([command, e]) => (e.editorTitle !== undefined ? [{ command, ...e.editorTitle }] : [])),
      'view/title': entries.flatMap(([command, e]) => (e.viewTitle !== undefined ? [{ command, ...e.viewTitle }] : [])),
      'webview/context': entries.flatMap(([command, e]) => (e.webviewContext !== undefined ? [{ command, when: e.webviewContext }] : [])),
    },
    keybindings: entries.flatMap(([command, e]) => (e.keys ?? []).map((k) => ({ command, ...k }))),
  };
}
