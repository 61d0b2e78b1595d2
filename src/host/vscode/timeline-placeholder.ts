import * as vscode from 'vscode';

export const TIMELINE_VIEW_ID = 'agentCheckpoints.timeline';

export class TimelineResolution {
  private resolve!: () => void;
  readonly resolved = new Promise<void>((r) => (this.resolve = r));
  markResolved(): void {
    this.resolve();
  }
}

/** Until the timeline lands: a view that resolves and says so. */
export function registerTimelineView(context: vscode.ExtensionContext, resolution: TimelineResolution): vscode.Disposable {
  const provider: vscode.WebviewViewProvider = {
    resolveWebviewView(view) {
      view.webview.options = { enableScripts: false, localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'media')] };
      view.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none';"></head><body>No runs yet.</body></html>`;
      resolution.markResolved();
    },
  };
  return vscode.window.registerWebviewViewProvider(TIMELINE_VIEW_ID, provider);
}
