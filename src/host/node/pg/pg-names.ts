// What the PostgreSQL store is known by, without loading pg: pg is loaded only when a
// postgres:// store is opened (loading it costs the CLI about 55 ms, and its runtime probe of
// `navigator` is reported as an error by the extension host).

/** The address without its password, for messages. */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable address)';
  }
}
