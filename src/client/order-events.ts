import type { ReadableStream } from 'node:stream/web';
import { field, parseJson } from './service-calls.js';

/** The data of each complete event in `buffer`, and what is left of it (an event still arriving). */
const takeEvents = (buffer: string): { data: string[]; rest: string } => {
  const data: string[] = [];
  let rest = buffer;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const lines = rest.slice(0, end).split('\n');
    rest = rest.slice(end + 2);
    const payload = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
    if (payload.length > 0) data.push(payload.join('\n'));
  }
  return { data, rest };
};

/**
 * Watches an order decide on its server-sent event stream (`GET /api/v1/orders/{id}/events`) and answers
 * the first view whose status is no longer RESERVED; null if the stream ended, failed or outlived the
 * deadline first (the caller then asks the order itself).
 */
export const watchUntilDecided = async (
  base: string,
  orderId: string,
  token: string,
  deadline: number,
): Promise<unknown> => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
  try {
    const response = await fetch(`${base}/api/v1/orders/${encodeURIComponent(orderId)}/events`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (response.status !== 200 || !response.body) return null;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const chunk = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (chunk.done || !chunk.value) return null;
      const { data, rest } = takeEvents(buffer + decoder.decode(chunk.value, { stream: true }));
      buffer = rest;
      for (const text of data) {
        const view = parseJson(text);
        const status = field(view, 'status');
        if (typeof status === 'string' && status !== 'RESERVED') return view;
      }
    }
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
};
