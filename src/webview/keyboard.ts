import type { FlatRow } from './tree';

// Keyboard model of the tree (WAI-ARIA tree pattern): pure, so it is tested without a DOM.

export type NavEffect =
  | { readonly kind: 'select'; readonly index: number }
  | { readonly kind: 'expand'; readonly index: number; readonly expand: boolean }
  | { readonly kind: 'activate'; readonly index: number }
  | { readonly kind: 'none' };

const NONE: NavEffect = { kind: 'none' };

function clamp(index: number, count: number): number {
  return Math.max(0, Math.min(count - 1, index));
}

/** What a key does with `selected` highlighted; `pageSize` rows per PageUp/PageDown. */
export function navigate(rows: readonly FlatRow[], selected: number, key: string, pageSize: number): NavEffect {
  const count = rows.length;
  if (count === 0) return NONE;
  if (selected < 0 || selected >= count) {
    return ['ArrowDown', 'ArrowUp', 'Home', 'End', 'PageDown', 'PageUp'].includes(key)
      ? { kind: 'select', index: key === 'End' ? count - 1 : 0 }
      : NONE;
  }
  const row = rows[selected]!;
  switch (key) {
    case 'ArrowDown':
      return { kind: 'select', index: clamp(selected + 1, count) };
    case 'ArrowUp':
      return { kind: 'select', index: clamp(selected - 1, count) };
    case 'Home':
      return { kind: 'select', index: 0 };
    case 'End':
      return { kind: 'select', index: count - 1 };
    case 'PageDown':
      return { kind: 'select', index: clamp(selected + Math.max(1, pageSize), count) };
    case 'PageUp':
      return { kind: 'select', index: clamp(selected - Math.max(1, pageSize), count) };
    case 'ArrowRight':
      if (row.expandable && !row.expanded) return { kind: 'expand', index: selected, expand: true };
      if (row.expanded) return { kind: 'select', index: selected + 1 };
      return NONE;
    case 'ArrowLeft':
      if (row.expanded) return { kind: 'expand', index: selected, expand: false };
      return row.parent >= 0 ? { kind: 'select', index: row.parent } : NONE;
    case ' ':
      return row.expandable ? { kind: 'expand', index: selected, expand: !row.expanded } : NONE;
    case 'Enter':
      return { kind: 'activate', index: selected };
    default:
      return NONE;
  }
}
