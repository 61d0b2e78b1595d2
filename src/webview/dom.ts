// The one way the webview makes an element: a tag, its class, and its text (never HTML).

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Sets an attribute to `value`, or removes it when there is none. */
export function setAttr(node: Element, name: string, value: string | undefined): void {
  if (value !== undefined) node.setAttribute(name, value);
  else node.removeAttribute(name);
}
