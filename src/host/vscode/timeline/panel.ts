import * as vscode from 'vscode';

// The Timeline in an editor tab, for room: the same webview document (same CSP, same messages)
// in a WebviewPanel, driven by a provider of its own through this adapter. A wide tab shows the
// tree and the conversation side by side (the stylesheet's wide layout).

export const TIMELINE_PANEL_TYPE = 'agentCheckpoints.timelinePanel';

/** A WebviewPanel seen as the WebviewView the provider drives (no badge: the view's icon has it). */
export function panelAsView(panel: vscode.WebviewPanel): vscode.WebviewView {
  return {
    viewType: TIMELINE_PANEL_TYPE,
    webview: panel.webview,
    title: panel.title,
    description: undefined,
    badge: undefined,
    get visible() {
      return panel.visible;
    },
    onDidDispose: panel.onDidDispose,
    onDidChangeVisibility: (listener, thisArg, disposables) =>
      panel.onDidChangeViewState(() => listener.call(thisArg), undefined, disposables),
    show: (preserveFocus) => panel.reveal(undefined, preserveFocus),
  };
}

/** A new editor tab for the Timeline, beside the active editor. */
export function createTimelinePanel(extensionUri: vscode.Uri): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(
    TIMELINE_PANEL_TYPE,
    'Agent Timeline',
    { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
    {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
    },
  );
}
