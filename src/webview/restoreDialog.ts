import type { RestoreOutcome } from '../protocol/messages';
import { sortRestoreFiles, type FileRestoreAction, type RestoreMode, type RestorePreview } from '../protocol/viewModel';
import type { Rpc } from './rpc';
import { counted } from '../words/words';
import { el } from './dom';

// Restore is never one click: the person sees what happens to each file (conflicts first) and
// which outside effects stay, then confirms. The host checks the confirmation names the preview.

export interface RestoreTarget {
  readonly runId: string;
  readonly checkpointId: string;
  readonly title: string;
}

const MODES: ReadonlyArray<{ mode: RestoreMode; text: string; title: string }> = [
  { mode: 'files', text: 'Files', title: 'Put the files the agent wrote back as they were at this checkpoint' },
  { mode: 'session', text: 'Session', title: 'Go on from this checkpoint in a fork (a new run); files stay, this run stays as it was' },
  { mode: 'both', text: 'Both', title: 'Roll back the files (undoable), and go on from this checkpoint in a fork' },
];

const ACTION_LOOK: Record<FileRestoreAction, { icon: string; tone: string; text: string }> = {
  conflict: { icon: 'warning', tone: 'warning', text: 'conflict: changed since, left as it is' },
  revert: { icon: 'discard', tone: 'info', text: 'will be put back' },
  already: { icon: 'check', tone: 'muted', text: 'already as at the checkpoint' },
  skip: { icon: 'circle-slash', tone: 'muted', text: 'skipped' },
};

export function previewLines(preview: RestorePreview): HTMLElement[] {
  const lines: HTMLElement[] = [];
  const files = sortRestoreFiles(preview.files);
  if (preview.mode !== 'session') {
    if (files.length === 0) lines.push(el('li', 'preview-line', 'No file the agent wrote needs to change.'));
    for (const file of files) {
      const look = ACTION_LOOK[file.action];
      const line = el('li', `preview-line action-${file.action}`);
      line.append(
        el('span', `codicon codicon-${look.icon} tone-${look.tone}`),
        el('span', 'path', file.path),
        el('span', 'desc', file.detail ? `${look.text}: ${file.detail}` : look.text),
      );
      line.title = `${file.path}: ${look.text}${file.detail ? `\n${file.detail}` : ''}`;
      lines.push(line);
    }
  }
  if (preview.mode !== 'files') {
    const dropped = preview.messagesDropped ?? 0;
    lines.push(
      el(
        'li',
        'preview-line',
        dropped > 0
          ? `A fork goes on from here without the ${counted(dropped, 'message')} after this checkpoint; this run keeps them and stays resumable.`
          : 'A fork goes on from this checkpoint; this run stays resumable.',
      ),
    );
  }
  for (const item of preview.externalEffects) lines.push(effectLine(item));
  return lines;
}

type Effect = RestorePreview['externalEffects'][number];

/** Whether the person may ask the agent to undo this effect: not once it was undone, and never an undo itself (that would redo it). */
export function offeredForUndo(item: Effect): boolean {
  return item.undoneBy === undefined && item.undoes === undefined;
}

function effectState(item: Effect): string {
  if (item.undoes) return `an undo of ${item.undoes.join(', ')}: not offered (undoing it would redo that)`;
  if (item.undoneBy) return `already undone by ${item.undoneBy.join(', ')}`;
  if (item.undo) return `not undone by restore; declared undo: ${item.undo}`;
  return item.effect.reversible ? `not undone by restore; to undo: ${item.effect.compensation}` : 'not undone by restore';
}

/** One external effect: the call in words (its command, its tool and arguments), its short result, and whether it can be picked for undo. */
function effectLine(item: Effect): HTMLElement {
  const offered = offeredForUndo(item);
  const line = el('li', `preview-line effect${offered ? '' : ' settled'}`);
  const state = effectState(item);
  const result = item.result?.split('\n', 1)[0];
  const words = el('span', 'effect-words');
  words.append(el('span', 'path', item.label), el('span', 'desc', result ? `${state}. Result: ${result}` : state));
  if (offered) {
    const pick = el('input', 'effect-pick');
    pick.type = 'checkbox';
    pick.checked = true;
    pick.value = item.callId;
    pick.setAttribute('aria-label', `Ask the agent to undo ${item.label}`);
    line.append(pick);
  } else line.append(el('span', `codicon codicon-${item.undoneBy ? 'check' : 'debug-step-back'} tone-muted`));
  line.append(words);
  line.title = [
    `${item.label} (${item.callId})`,
    `Input: ${item.input ?? '(none)'}`,
    `Result: ${item.result ?? '(none recorded)'}`,
    state,
  ].join('\n');
  return line;
}

/** Opens the preview-then-confirm dialog; resolves with the outcome, or undefined when cancelled. */
export function openRestoreDialog(host: HTMLElement, rpc: Rpc, target: RestoreTarget): Promise<RestoreOutcome | undefined> {
  return new Promise((resolve, reject) => {
    const previous = document.activeElement as HTMLElement | null;
    const backdrop = el('div', 'dialog-backdrop');
    const dialog = el('div', 'dialog');
    dialog.setAttribute('role', 'dialog');
    dialog.setAttribute('aria-modal', 'true');
    dialog.setAttribute('aria-labelledby', 'restore-title');
    const heading = el('h2', 'dialog-title', target.title);
    heading.id = 'restore-title';
    const modes = el('div', 'modes');
    modes.setAttribute('role', 'radiogroup');
    modes.setAttribute('aria-label', 'What to restore');
    const list = el('ul', 'preview-list');
    list.setAttribute('aria-live', 'polite');
    const confirm = el('button', 'primary', 'Restore');
    const cancel = el('button', 'secondary', 'Cancel');
    const undoEffects = el('button', 'secondary', 'Ask the agent to undo these');
    undoEffects.title = 'A new instruction to this run naming the checked external effects; each call it makes waits for your approval';
    undoEffects.hidden = true;
    const buttons = el('div', 'dialog-buttons');
    buttons.append(confirm, undoEffects, cancel);
    dialog.append(heading, modes, list, buttons);
    backdrop.appendChild(dialog);
    host.appendChild(backdrop);

    let current: RestorePreview | undefined;
    let mode: RestoreMode = 'files';
    let generation = 0;
    const close = (outcome: RestoreOutcome | undefined) => {
      backdrop.remove();
      previous?.focus();
      resolve(outcome);
    };
    const load = async () => {
      const mine = ++generation;
      current = undefined;
      confirm.disabled = true;
      list.replaceChildren(el('li', 'preview-line muted', 'Checking each file against its live content…'));
      try {
        const preview = await rpc.request('restorePreview', { runId: target.runId, checkpointId: target.checkpointId, mode });
        if (mine !== generation) return;
        current = preview;
        list.replaceChildren(...previewLines(preview));
        undoEffects.hidden = !preview.externalEffects.some(offeredForUndo);
        confirm.disabled = false;
        confirm.textContent = mode === 'files' ? 'Restore files' : mode === 'session' ? 'Restore session' : 'Restore files and session';
      } catch (error) {
        if (mine === generation) list.replaceChildren(el('li', 'preview-line tone-error', `Preview failed: ${(error as Error).message}`));
      }
    };
    for (const option of MODES) {
      const radio = el('button', 'mode', option.text);
      radio.setAttribute('role', 'radio');
      radio.title = option.title;
      radio.setAttribute('aria-checked', String(option.mode === mode));
      radio.addEventListener('click', () => {
        mode = option.mode;
        for (const r of modes.children) r.setAttribute('aria-checked', String(r === radio));
        void load();
      });
      modes.appendChild(radio);
    }
    confirm.addEventListener('click', () => {
      if (!current) return;
      confirm.disabled = true;
      const { runId, checkpointId, previewId } = current;
      rpc.request('restore', { runId, checkpointId, mode: current.mode, previewId }).then(close, (error: Error) => {
        backdrop.remove();
        previous?.focus();
        reject(error);
      });
    });
    list.addEventListener('change', () => {
      undoEffects.disabled = list.querySelectorAll('input.effect-pick:checked').length === 0;
    });
    undoEffects.addEventListener('click', () => {
      const callIds = [...list.querySelectorAll<HTMLInputElement>('input.effect-pick:checked')].map((pick) => pick.value);
      if (!current || callIds.length === 0) return;
      undoEffects.disabled = true;
      rpc.request('undoEffects', { runId: current.runId, callIds }).then(
        (outcome) => close({ message: outcome.message, files: [] }),
        (error: Error) => {
          backdrop.remove();
          previous?.focus();
          reject(error);
        },
      );
    });
    cancel.addEventListener('click', () => close(undefined));
    dialog.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close(undefined);
      } else if (event.key === 'Tab') trapTab(event, dialog);
    });
    cancel.focus();
    void load();
  });
}

function trapTab(event: KeyboardEvent, dialog: HTMLElement): void {
  const focusable = [...dialog.querySelectorAll<HTMLElement>('button:not([disabled]), input:not([disabled])')];
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (!first || !last) return;
  if (event.shiftKey && document.activeElement === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && document.activeElement === last) {
    event.preventDefault();
    first.focus();
  }
}
