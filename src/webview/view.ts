import { filterRuns, isEmptyFilter, NO_FILTER, parseFilter, type TimelineFilter } from './filter';
import { navigate } from './keyboard';
import type { TimelineModel } from './model';
import type { RefreshReason } from './dispatch';
import { defaultAction, describeRow, type ActionId, type RowContent } from './rowContent';
import { newlySeen, type SavedState } from './state';
import { contextOf, flatten, forkDepths, indexOfKey, rowKey, type FlatRow } from './tree';
import { maxScrollTop, pageSize, revealScrollTop, rowAt, rowOffsets, visibleWindow } from './virtual';
import { el, setAttr } from './dom';

/** How long a saved scroll place waits for the steps it lies in to arrive. */
const PENDING_SCROLL_MS = 3000;

export const ROW_HEIGHT = 22;
/** Height of each kind of row: a run carries a second line; a step's label and a problem's message wrap to two lines. */
const H = ROW_HEIGHT;
export const ROW_HEIGHTS: Record<FlatRow['kind'], number> = { run: 40, step: 58, call: H, effect: H, patch: H, problem: 56 };
const OVERSCAN = 6;
const INDENT_PX = 14;

export interface ViewHost {
  readonly model: TimelineModel;
  action(id: ActionId, row: FlatRow): void;
  save(state: SavedState): void;
  now(): number;
  /** The selected row changed (the detail panel follows it). */
  selected(row: FlatRow | undefined): void;
}

/** What the filter matched: steps and runs shown. */
export interface FilterCount {
  readonly active: boolean;
  readonly steps: number;
  readonly runs: number;
}

/** The virtualised tree: only rows near the viewport are in the DOM, each ROW_HEIGHT tall. */
export class TimelineView {
  private rows: FlatRow[] = [];
  /** Each run's fork depth: a fork's rows are indented under its parent's. */
  private depths = new Map<string, number>();
  private offsets: number[] = [0];
  private readonly expanded: Set<string>;
  private selectedKey: string | null;
  private seenRuns: string[];
  private readonly canvas: HTMLDivElement;
  private readonly slots: HTMLDivElement[] = [];
  private readonly signatures = new WeakMap<HTMLElement, string>();
  private pendingScrollTop: number | undefined;
  private pendingUntil = 0;
  private renderQueued = false;
  /** The list shows its end: new rows and a shrinking viewport keep it there. */
  private atBottom = false;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private filter: TimelineFilter = NO_FILTER;
  /** Rows the filter opens so its matches show, and those of them the person closed since. */
  private filterOpen: ReadonlySet<string> = new Set();
  private readonly filterClosed = new Set<string>();
  /** The run row kept at the top while its steps scroll under it. */
  private readonly sticky: HTMLDivElement;
  private readonly stickyRow: HTMLDivElement;

  constructor(
    private readonly tree: HTMLElement,
    private readonly empty: HTMLElement,
    private readonly host: ViewHost,
    saved: SavedState,
  ) {
    this.expanded = new Set(saved.expanded);
    this.selectedKey = saved.selected;
    this.seenRuns = saved.seenRuns;
    this.pendingScrollTop = saved.scrollTop;
    this.canvas = document.createElement('div');
    this.canvas.className = 'canvas';
    this.sticky = document.createElement('div');
    this.sticky.className = 'sticky-run';
    this.sticky.setAttribute('aria-hidden', 'true');
    this.stickyRow = document.createElement('div');
    this.sticky.appendChild(this.stickyRow);
    tree.append(this.sticky, this.canvas);
    tree.addEventListener('scroll', () => {
      this.atBottom = this.rows.length > 0 && tree.scrollTop >= maxScrollTop(this.offsets, tree.clientHeight) - 2;
      this.queueRender(true);
    });
    // The panels under the tree grow and shrink as steps stream in: a list at its end stays there.
    new ResizeObserver(() => {
      if (this.atBottom) tree.scrollTop = maxScrollTop(this.offsets, tree.clientHeight);
      this.queueRender(false);
    }).observe(tree);
    tree.addEventListener('keydown', (e) => this.onKey(e));
    tree.addEventListener('click', (e) => this.onClick(e));
    tree.addEventListener('dblclick', (e) => this.onDoubleClick(e));
    window.addEventListener('resize', () => this.queueRender(false));
  }

  /** Re-flattens after the model changed and paints the visible rows now. */
  refresh(reason: RefreshReason): void {
    // Streamed text changes no row's place: repaint the visible rows only.
    if (reason === 'stream') return this.queueRender(false);
    const wasAtBottom = this.atBottom;
    const followLive = this.liveRowInView();
    this.expandNewRuns(reason !== 'listed');
    const filtered = filterRuns(this.host.model.list(), this.filter);
    this.filterOpen = filtered.expand;
    const open = new Set(this.expanded);
    for (const key of filtered.expand) if (!this.filterClosed.has(key)) open.add(key);
    this.rows = flatten(filtered.runs, open);
    this.depths = forkDepths(filtered.runs.map((run) => run.header));
    this.count = { active: !isEmptyFilter(this.filter), steps: filtered.steps, runs: filtered.runs.length };
    this.offsets = rowOffsets(this.rows.map((r) => ROW_HEIGHTS[r.kind]));
    this.tree.style.setProperty('--rows-height', `${this.offsets[this.rows.length]}px`);
    this.empty.hidden = this.rows.length > 0;
    if (this.pendingScrollTop !== undefined && (reason === 'snapshot' || reason === 'delta' || reason === 'listed')) {
      // A long run's later steps and the opening's other runs follow the snapshot: the saved place may lie in them.
      if (reason === 'snapshot') this.pendingUntil = performance.now() + PENDING_SCROLL_MS;
      this.tree.scrollTop = this.pendingScrollTop;
      if (this.tree.scrollTop >= this.pendingScrollTop - 2 || performance.now() > this.pendingUntil) this.pendingScrollTop = undefined;
    } else if (wasAtBottom && reason === 'delta') {
      this.tree.scrollTop = maxScrollTop(this.offsets, this.tree.clientHeight);
    } else if (followLive && reason === 'delta') {
      const live = this.liveRow();
      if (live >= 0) this.tree.scrollTop = revealScrollTop(live, this.tree.scrollTop, this.tree.clientHeight, this.offsets);
    }
    this.render();
  }

  /** What the filter matches now. */
  count: FilterCount = { active: false, steps: 0, runs: 0 };

  /** Filters the rows by a query (words, tool:, file:, status:); an empty one shows all. */
  setFilter(query: string): FilterCount {
    this.filter = parseFilter(query);
    this.filterClosed.clear();
    this.tree.scrollTop = 0;
    this.refresh('live');
    return this.count;
  }

  /** Selects a step's row (opening its run) without telling the host: the conversation stays where it is. */
  showStep(runId: string, stepId: number): void {
    const runKey = rowKey.run(runId);
    if (!this.expanded.has(runKey)) {
      this.expanded.add(runKey);
      this.refresh('live');
    }
    this.selectAndReveal(indexOfKey(this.rows, rowKey.step(runId, stepId)));
  }

  /**
   * Follows the window's selected run: its row is selected, unless a row of it already is (a
   * picked step stays picked). False while its row is not there yet (its first delta may follow).
   */
  showRun(runId: string): boolean {
    return this.selectedRow?.run.runId === runId || this.selectAndReveal(indexOfKey(this.rows, rowKey.run(runId)));
  }

  private selectAndReveal(index: number): boolean {
    if (index < 0) return false;
    this.selectedKey = this.rows[index]!.key;
    this.tree.scrollTop = revealScrollTop(index, this.tree.scrollTop, this.tree.clientHeight, this.offsets);
    this.render();
    this.scheduleSave();
    return true;
  }

  /** Selects the first step the filter left (from the filter box: Enter or Down). */
  selectFirstMatch(): void {
    const index = this.rows.findIndex((r) => r.kind === 'step');
    this.select(index >= 0 ? index : 0);
    this.tree.focus();
  }

  /** The newest step of a run running in this window, as a row index (-1: none shown). */
  private liveRow(): number {
    let index = -1;
    this.rows.forEach((r, i) => {
      if (r.kind === 'step' && r.run.active && r.run.status === 'running' && r.posinset === r.setsize && index < 0) index = i;
    });
    return index;
  }

  /** The live step is in view: new steps of its run are followed (unless the person scrolled away). */
  private liveRowInView(): boolean {
    const index = this.liveRow();
    if (index < 0) return false;
    const top = this.offsets[index] ?? 0;
    return top >= this.tree.scrollTop - 1 && top < this.tree.scrollTop + this.tree.clientHeight;
  }

  /** The selected row, when it is still shown. */
  get selectedRow(): FlatRow | undefined {
    const index = indexOfKey(this.rows, this.selectedKey);
    return index >= 0 ? this.rows[index] : undefined;
  }

  /** Rows in the DOM right now (the virtualisation at work). */
  get domRows(): number {
    return this.canvas.childElementCount;
  }

  /** Runs not seen before are remembered; the first of them is opened unless `expand` is false (the opening's listed runs). */
  private expandNewRuns(expand: boolean): void {
    const ids = this.host.model.list().map((r) => r.header.runId);
    const { expandRunId, seen } = newlySeen(ids, this.seenRuns);
    if (seen.length === this.seenRuns.length) return;
    this.seenRuns = seen;
    if (expand && expandRunId !== undefined) this.expanded.add(`r\u001f${expandRunId}`);
    this.scheduleSave();
  }

  private queueRender(save: boolean): void {
    if (save) this.scheduleSave();
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  private render(): void {
    const win = visibleWindow(this.tree.scrollTop, this.tree.clientHeight, this.offsets, OVERSCAN);
    const count = win.end - win.start;
    while (this.slots.length < count) {
      const slot = document.createElement('div');
      slot.className = 'row';
      slot.setAttribute('role', 'treeitem');
      this.canvas.appendChild(slot);
      this.slots.push(slot);
    }
    while (this.slots.length > count) this.slots.pop()!.remove();
    const now = this.host.now();
    for (let i = 0; i < count; i++) this.paintRow(this.slots[i]!, win.start + i, now);
    const selected = indexOfKey(this.rows, this.selectedKey);
    if (selected >= win.start && selected < win.end) this.tree.setAttribute('aria-activedescendant', `tl-row-${selected}`);
    else this.tree.removeAttribute('aria-activedescendant');
    this.paintSticky(now);
  }

  /** The run of the top row, pinned while its own row is scrolled away. */
  private paintSticky(now: number): void {
    let index = this.rows.length > 0 ? rowAt(this.offsets, this.tree.scrollTop) : -1;
    while (index >= 0 && this.rows[index]!.parent >= 0) index = this.rows[index]!.parent;
    const show = index >= 0 && (this.offsets[index] ?? 0) < this.tree.scrollTop - 1;
    this.sticky.hidden = !show;
    if (!show) return;
    const row = this.rows[index]!;
    const content = describeRow(row, now);
    const el = this.stickyRow;
    el.dataset.index = String(index);
    el.className = `row kind-run sticky${row.key === this.selectedKey ? ' selected' : ''}`;
    el.style.height = `${ROW_HEIGHTS.run}px`;
    el.title = content.title;
    el.replaceChildren(...this.rowChildren(row, content, false));
  }

  private paintRow(el: HTMLDivElement, index: number, now: number): void {
    const row = this.rows[index]!;
    const streaming = row.kind === 'step' ? this.host.model.streaming(row.run.runId, row.step!.stepId) : undefined;
    const content = describeRow(row, now, streaming);
    const selected = row.key === this.selectedKey;
    const signature = `${index}|${row.key}|${row.expanded}|${row.expandable}|${selected}|${row.setsize}|${JSON.stringify(content)}`;
    if (this.signatures.get(el) === signature) return;
    this.signatures.set(el, signature);
    el.id = `tl-row-${index}`;
    el.dataset.index = String(index);
    el.style.transform = `translateY(${this.offsets[index]}px)`;
    el.style.height = `${ROW_HEIGHTS[row.kind]}px`;
    el.style.paddingLeft = `${(row.level - 1 + (this.depths.get(row.run.runId) ?? 0)) * INDENT_PX + 4}px`;
    el.className = `row kind-${row.kind}${selected ? ' selected' : ''}`;
    el.setAttribute('aria-level', String(row.level));
    el.setAttribute('aria-setsize', String(row.setsize));
    el.setAttribute('aria-posinset', String(row.posinset));
    el.setAttribute('aria-selected', String(selected));
    if (row.expandable) el.setAttribute('aria-expanded', String(row.expanded));
    else el.removeAttribute('aria-expanded');
    el.title = content.title;
    setAttr(el, 'aria-label', content.spoken);
    el.setAttribute('data-vscode-context', JSON.stringify(contextOf(row)));
    el.replaceChildren(...this.rowChildren(row, content, selected));
  }

  private rowChildren(row: FlatRow, content: RowContent, selected: boolean): HTMLElement[] {
    const twistie = el(
      'span',
      `twistie codicon ${row.expandable ? (row.expanded ? 'codicon-chevron-down' : 'codicon-chevron-right') : 'codicon-blank'}`,
    );
    twistie.dataset.twistie = '1';
    const icon = el('span', `icon codicon codicon-${content.icon} tone-${content.tone}${content.spin ? ' codicon-modifier-spin' : ''}`);
    const line = el('span', 'line');
    line.append(el('span', 'label', content.label));
    if (content.description !== '') line.append(el('span', 'desc', content.description));
    if (content.badges.length > 0) {
      const badges = el('span', 'badges');
      for (const text of content.badges) badges.appendChild(el('span', 'badge', text));
      line.appendChild(badges);
    }
    const body = el('span', 'body');
    body.append(line);
    if (content.meta !== undefined) body.append(el('span', 'meta', content.meta));
    const children: HTMLElement[] = [twistie, icon, body];
    if (content.actions.length > 0) {
      const actions = el('span', 'actions');
      for (const action of content.actions) {
        const button = document.createElement('button');
        button.className = `action codicon codicon-${action.icon}`;
        button.title = action.title;
        button.setAttribute('aria-label', action.title);
        button.tabIndex = selected ? 0 : -1;
        button.dataset.action = action.id;
        actions.appendChild(button);
      }
      children.push(actions);
    }
    return children;
  }

  private select(index: number): void {
    const row = this.rows[index];
    if (!row) return;
    this.selectedKey = row.key;
    this.host.selected(row);
    const top = revealScrollTop(index, this.tree.scrollTop, this.tree.clientHeight, this.offsets);
    if (top !== this.tree.scrollTop) this.tree.scrollTop = top;
    this.render();
    this.scheduleSave();
  }

  private setExpanded(index: number, expand: boolean): void {
    const row = this.rows[index];
    if (!row || !row.expandable) return;
    if (expand) {
      this.expanded.add(row.key);
      this.filterClosed.delete(row.key);
    } else {
      this.expanded.delete(row.key);
      if (this.filterOpen.has(row.key)) this.filterClosed.add(row.key);
    }
    this.selectedKey = row.key;
    this.refresh('live');
    this.scheduleSave();
  }

  private activate(index: number): void {
    const row = this.rows[index];
    if (!row) return;
    const action = defaultAction(row);
    if (action) this.host.action(action, row);
    else if (row.expandable) this.setExpanded(index, !row.expanded);
  }

  private onKey(event: KeyboardEvent): void {
    if ((event.target as HTMLElement).closest('button')) return;
    const selected = indexOfKey(this.rows, this.selectedKey);
    const effect = navigate(this.rows, selected, event.key, pageSize(this.tree.clientHeight, ROW_HEIGHT));
    if (effect.kind === 'none') return;
    event.preventDefault();
    if (effect.kind === 'select') this.select(effect.index);
    else if (effect.kind === 'expand') this.setExpanded(effect.index, effect.expand);
    else this.activate(effect.index);
  }

  private rowIndexOf(event: Event): number {
    const rowEl = (event.target as HTMLElement).closest<HTMLElement>('.row');
    return rowEl?.dataset.index === undefined ? -1 : Number(rowEl.dataset.index);
  }

  private onClick(event: MouseEvent): void {
    const index = this.rowIndexOf(event);
    const row = this.rows[index];
    if (!row) return;
    const target = event.target as HTMLElement;
    const button = target.closest<HTMLElement>('button[data-action]');
    this.selectedKey = row.key;
    this.host.selected(row);
    if (button) this.host.action(button.dataset.action as ActionId, row);
    else if (target.dataset.twistie) this.setExpanded(index, !row.expanded);
    else this.select(index);
    if (!button) this.tree.focus();
    if (!button && row.kind === 'problem') this.activate(index);
  }

  private onDoubleClick(event: MouseEvent): void {
    if ((event.target as HTMLElement).closest('button')) return;
    const index = this.rowIndexOf(event);
    if (index >= 0) this.activate(index);
  }

  private scheduleSave(): void {
    if (this.saveTimer !== undefined) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.host.save(this.snapshotState());
    }, 150);
  }

  snapshotState(): SavedState {
    return { expanded: [...this.expanded], scrollTop: this.tree.scrollTop, selected: this.selectedKey, seenRuns: this.seenRuns };
  }
}
