// An error in words: the one function every layer uses to turn what was thrown into text.

/**
 * One line for a person or a log: the message (the name when it has none), its errno code when
 * the message does not say it, and its cause when that adds something. Anything else thrown is
 * shown as a string.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const message = error.message || error.name;
  const code = (error as { code?: unknown }).code;
  const coded = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && !message.includes(cause.message) ? `${coded} (${cause.message})` : coded;
}
