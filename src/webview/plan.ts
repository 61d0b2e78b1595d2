import type { PlanView } from '../protocol/viewModel';
import { planStatusWords, planSummary } from '../words/plan-words';
import { el } from './dom';

// The model's plan (its latest update_plan call), pinned above the run's conversation: a
// disclosure whose summary line says how far it is ("Plan: 1 of 3 done; now: …", or "left at: …"
// once the run is not running) and opens to the steps, each with an icon and, for a screen reader,
// its status in words. Theme colours only.

const ICONS: Record<PlanView[number]['status'], { icon: string; tone: string }> = {
  done: { icon: 'pass', tone: 'ok' },
  in_progress: { icon: 'arrow-circle-right', tone: 'info' },
  pending: { icon: 'circle-large-outline', tone: 'muted' },
};

/** The pinned plan of a run (`stopped`: not running); `open` keeps the person's choice across repaints. */
export function planPanel(plan: PlanView, stopped: boolean, open: boolean, toggled: (open: boolean) => void): HTMLElement {
  const panel = el('details', 'plan');
  panel.open = open;
  panel.setAttribute('aria-label', 'The agent’s plan');
  panel.addEventListener('toggle', () => toggled(panel.open));
  const summary = el('summary', 'plan-summary');
  const progress = planSummary(plan, stopped);
  summary.append(el('span', 'plan-title', 'Plan'), el('span', 'plan-progress', progress));
  summary.title = `The agent's plan: ${progress}`;
  const list = el('ol', 'plan-steps');
  for (const item of plan) {
    const look = ICONS[item.status];
    const words = planStatusWords(item.status, stopped);
    const li = el('li', `plan-step plan-${item.status}`);
    // Where a run that stopped was left: no longer the colour of work going on.
    const tone = stopped && item.status === 'in_progress' ? 'muted' : look.tone;
    const icon = el('span', `codicon codicon-${look.icon} tone-${tone}`);
    icon.setAttribute('aria-hidden', 'true');
    li.append(icon, el('span', 'plan-text', item.step), el('span', 'visually-hidden', ` (${words})`));
    li.title = `${words}: ${item.step}`;
    list.append(li);
  }
  // A long plan scrolls inside its box: reachable from the keyboard then.
  if (plan.length > 6) list.tabIndex = 0;
  list.setAttribute('aria-label', 'Plan steps');
  panel.append(summary, list);
  return panel;
}
