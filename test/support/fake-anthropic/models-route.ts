import type * as http from 'node:http';

// GET /v1/models of the fake server.

/** A page of the Models API: `limit` models after `after_id`. */
export function sendModels(res: http.ServerResponse, url: string, models: readonly Record<string, unknown>[]): void {
  const params = new URL(url, 'http://fake').searchParams;
  const limit = Number(params.get('limit') ?? 20);
  const after = params.get('after_id');
  const start = after === null ? 0 : models.findIndex((m) => m['id'] === after) + 1;
  const data: Record<string, unknown>[] = models
    .slice(start, start + limit)
    .map((m) => ({ type: 'model', created_at: '2026-01-01T00:00:00Z', ...m }));
  const page = { data, has_more: start + limit < models.length, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(page));
}
