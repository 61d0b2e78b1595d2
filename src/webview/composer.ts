import type { ContextChip } from '../protocol/messages';
import type { RunHeader } from '../protocol/viewModel';
import { el } from './dom';

// The composer at the bottom of the timeline: a new task (with context chips), or a new
// instruction for a run that stopped. Enter sends, Shift+Enter adds a line, Escape cancels
// the running run.

export interface ComposerHost {
  /** The run a new instruction goes to (the selected or newest run), if any. */
  target(): RunHeader | undefined;
  /** The run this window is driving now, if any. */
  running(): RunHeader | undefined;
  /** A run's title (words/run-title), as the run list shows it. */
  titleOf(run: RunHeader): string;
  start(task: string, context: readonly ContextChip[]): Promise<void>;
  continueRun(runId: string, instruction: string): Promise<void>;
  cancel(runId: string): void;
  pick(kind: ContextChip['kind']): Promise<readonly ContextChip[]>;
  report(error: Error): void;
}

const CONTINUABLE: ReadonlySet<RunHeader['status']> = new Set(['completed', 'failed', 'paused', 'cancelled', 'interrupted']);

/** A run that can take a new instruction: it stopped (completed, failed, paused, interrupted) and nobody writes it. */
export function canContinue(run: RunHeader | undefined): run is RunHeader {
  if (!run || run.damaged !== undefined || run.heldElsewhere !== undefined || run.active) return false;
  return CONTINUABLE.has(run.status);
}

export function chipText(chip: ContextChip): string {
  if (chip.kind === 'selection') return `${chip.path}:${chip.startLine ?? '?'}-${chip.endLine ?? '?'}`;
  return chip.path;
}

export class Composer {
  readonly element = el('div', 'composer');
  private readonly mode = el('div', 'composer-mode');
  private readonly chips = el('div', 'chips');
  private readonly input = el('textarea', 'composer-input');
  private readonly send = el('button', 'primary composer-send', 'Send');
  private readonly stop = el('button', 'secondary composer-stop', 'Stop');
  private context: ContextChip[] = [];
  /** The person chose "new run" although a run could be continued. */
  private forceNew = false;
  private busy = false;

  constructor(private readonly host: ComposerHost) {
    this.input.rows = 2;
    this.input.setAttribute('aria-label', 'Message to the agent');
    const pickers = el('div', 'pickers');
    for (const [kind, label, title] of [
      ['selection', 'Selection', 'Attach the selected lines of the active editor'],
      ['activeFile', 'Active file', 'Attach the file of the active editor'],
      ['files', 'Files…', 'Pick files to attach'],
    ] as const) {
      const b = el('button', 'chip-add', `+ ${label}`);
      b.title = title;
      b.addEventListener('click', () => void this.pick(kind));
      pickers.append(b);
    }
    const actions = el('div', 'composer-actions');
    actions.append(pickers, this.stop, this.send);
    this.element.append(this.mode, this.chips, this.input, actions);
    this.input.addEventListener('keydown', (event) => this.onKey(event));
    this.input.addEventListener('input', () => this.refresh());
    this.send.addEventListener('click', () => void this.submit());
    this.stop.addEventListener('click', () => this.cancelRunning());
    this.refresh();
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void this.submit();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      this.cancelRunning();
    }
  }

  private cancelRunning(): void {
    const running = this.host.running();
    if (running) this.host.cancel(running.runId);
  }

  private async pick(kind: ContextChip['kind']): Promise<void> {
    try {
      const picked = await this.host.pick(kind);
      const known = new Set(this.context.map(chipText));
      this.context.push(...picked.filter((c) => !known.has(chipText(c))));
      this.refresh();
    } catch (error) {
      this.host.report(error as Error);
    }
  }

  /** What Send does now: start a run, continue one, or nothing while a run is going. */
  private continueTarget(): RunHeader | undefined {
    const target = this.host.target();
    return !this.forceNew && canContinue(target) ? target : undefined;
  }

  private async submit(): Promise<void> {
    const text = this.input.value.trim();
    if (text === '' || this.busy || this.host.running()) return;
    this.busy = true;
    this.refresh();
    try {
      const target = this.continueTarget();
      if (target) await this.host.continueRun(target.runId, text);
      else await this.host.start(text, this.context);
      this.input.value = '';
      this.context = [];
      this.forceNew = false;
    } catch (error) {
      this.host.report(error as Error);
    } finally {
      this.busy = false;
      this.refresh();
    }
  }

  /** Repaints the mode line, chips and buttons (after the runs or the selection changed). */
  refresh(): void {
    const running = this.host.running();
    const target = this.continueTarget();
    this.mode.replaceChildren();
    if (running)
      this.mode.append(el('span', '', `The agent is working on "${shorten(this.host.titleOf(running))}". Escape or Stop cancels it.`));
    else if (target) {
      this.mode.append(
        el(
          'span',
          'composer-target',
          `Continues "${shorten(this.host.titleOf(target))}" (${target.status}); click another run to switch, or`,
        ),
      );
      const fresh = el('button', 'link-button', 'start a new run');
      fresh.addEventListener('click', () => {
        this.forceNew = true;
        this.refresh();
        this.input.focus();
      });
      this.mode.append(fresh);
    } else if (canContinue(this.host.target())) {
      const back = el('button', 'link-button', 'Continue the selected run instead');
      back.addEventListener('click', () => {
        this.forceNew = false;
        this.refresh();
      });
      this.mode.append(el('span', '', 'New run'), back);
    }
    this.input.placeholder = target
      ? 'A new instruction for this run (Enter sends, Shift+Enter adds a line)'
      : 'Describe a task for the agent (Enter sends, Shift+Enter adds a line)';
    this.paintChips(target === undefined);
    this.send.disabled = this.busy || running !== undefined || this.input.value.trim() === '';
    this.send.textContent = target ? 'Continue' : 'Start';
    this.stop.hidden = running === undefined;
  }

  private paintChips(show: boolean): void {
    this.chips.replaceChildren();
    this.element.querySelector('.pickers')?.toggleAttribute('hidden', !show);
    if (!show) return;
    this.context.forEach((chip, i) => {
      const c = el('span', 'chip', chipText(chip));
      const remove = el('button', 'chip-remove codicon codicon-close');
      remove.title = `Remove ${chipText(chip)}`;
      remove.setAttribute('aria-label', remove.title);
      remove.addEventListener('click', () => {
        this.context.splice(i, 1);
        this.refresh();
      });
      c.append(remove);
      this.chips.append(c);
    });
  }

  focus(): void {
    this.input.focus();
  }
}

function shorten(line: string): string {
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
