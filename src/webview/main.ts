// Webview entry: replaced by the timeline UI.
