import { counted } from '../words/words';
import { STATUS_FILTERS } from './filter';
import type { FilterCount } from './view';

// The search box over the Timeline: words, tool:, file: and status: terms, and a status menu
// for those who do not know the terms. Ctrl+F or "/" in the view focuses it; Escape clears it;
// Enter or Down goes to the first match.

export interface FilterBarHost {
  /** Applies the query; returns what it matched. */
  apply(query: string): FilterCount;
  /** Moves to the first matching step in the tree. */
  firstMatch(): void;
  /** Gives the focus back to the tree. */
  leave(): void;
}

const STATUS_LABELS: Record<(typeof STATUS_FILTERS)[number], string> = {
  failed: 'Failed',
  uncertain: 'Uncertain',
  running: 'Running',
  waiting: 'Not started',
  succeeded: 'Succeeded',
  changed: 'Changed files',
};

const DEBOUNCE_MS = 120;

export class FilterBar {
  readonly element: HTMLDivElement;
  readonly input: HTMLInputElement;
  private readonly status: HTMLSelectElement;
  private readonly count: HTMLSpanElement;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: FilterBarHost) {
    this.element = document.createElement('div');
    this.element.className = 'filter-bar';
    this.element.setAttribute('role', 'search');
    this.input = document.createElement('input');
    this.input.type = 'search';
    this.input.className = 'filter-input';
    this.input.placeholder = 'Find… (tool:, file:)';
    this.input.setAttribute('aria-label', 'Find in the Timeline: words, tool:name, file:path, status:failed');
    this.input.title = 'Words in what the agent said or did; tool:read_file; file:src/app.ts; status:failed (Ctrl+F or /)';
    this.status = document.createElement('select');
    this.status.className = 'filter-status';
    this.status.setAttribute('aria-label', 'Show only calls of a status');
    this.status.title = 'Show only the calls of a status (status: in the box does the same)';
    this.status.append(new Option('All calls', ''), ...STATUS_FILTERS.map((s) => new Option(STATUS_LABELS[s], s)));
    this.count = document.createElement('span');
    this.count.className = 'filter-count';
    this.count.setAttribute('role', 'status');
    this.count.setAttribute('aria-live', 'polite');
    this.element.append(this.input, this.status, this.count);
    this.input.addEventListener('input', () => this.schedule());
    this.status.addEventListener('change', () => this.apply());
    this.input.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** Focuses the box with its text selected. */
  focus(): void {
    this.input.focus();
    this.input.select();
  }

  /** Applies the filter again (the runs changed) and updates the count. */
  refresh(count: FilterCount): void {
    this.count.textContent = count.active ? `${counted(count.steps, 'step')} in ${counted(count.runs, 'run')}` : '';
  }

  private query(): string {
    const status = this.status.value;
    return status === '' ? this.input.value : `${this.input.value} status:${status}`;
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.apply(), DEBOUNCE_MS);
  }

  private apply(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.refresh(this.host.apply(this.query()));
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      if (this.input.value === '' && this.status.value === '') return this.host.leave();
      this.input.value = '';
      this.status.value = '';
      this.apply();
    } else if (event.key === 'Enter' || event.key === 'ArrowDown') {
      event.preventDefault();
      this.apply();
      this.host.firstMatch();
    }
  }
}

/** Ctrl+F / Cmd+F anywhere in the view, or "/" outside a text field, opens the search. */
export function isFindKey(event: KeyboardEvent): boolean {
  const typing = (event.target as HTMLElement | null)?.closest?.('input, textarea, select') != null;
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'f') return true;
  return event.key === '/' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey;
}
