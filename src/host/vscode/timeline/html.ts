// The Timeline webview document: one external script carrying the nonce, external styles, and
// a CSP that allows nothing else. Pure, so the policy is unit-tested.

export interface TimelineHtmlInput {
  /** Fresh per resolve, from a cryptographic source. */
  readonly nonce: string;
  /** `webview.cspSource`. */
  readonly cspSource: string;
  readonly scriptUri: string;
  readonly styleUris: readonly string[];
}

const NONCE = /^[A-Za-z0-9+/=_-]{16,}$/;

export function contentSecurityPolicy(nonce: string, cspSource: string): string {
  return [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource}`,
  ].join('; ');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function timelineHtml(input: TimelineHtmlInput): string {
  if (!NONCE.test(input.nonce)) throw new Error('timeline: the nonce must be at least 16 base64 characters');
  const csp = escapeAttribute(contentSecurityPolicy(input.nonce, input.cspSource));
  const styles = input.styleUris.map((uri) => `<link rel="stylesheet" href="${escapeAttribute(uri)}">`).join('\n    ');
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta http-equiv="Content-Security-Policy" content="${csp}">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    ${styles}
    <title>Agent Timeline</title>
  </head>
  <body>
    <div id="app"></div>
    <script nonce="${input.nonce}" src="${escapeAttribute(input.scriptUri)}"></script>
  </body>
</html>
`;
}
