/** One server-sent event: its name and its data, parsed as JSON. */
export type ServerEvent = Readonly<{ event: string; data: Record<string, unknown> }>;

export type EventStream = Readonly<{
  status: number;
  contentType: string;
  /** resolves with the next event, or null once the stream has ended */
  next: () => Promise<ServerEvent | null>;
  close: () => void;
}>;

/** Opens a server-sent event stream with fetch and reads it event by event. */
export const openEventStream = async (url: string, token: string): Promise<EventStream> => {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<ServerEvent | null> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const lines = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
        if (data.length === 0) continue; // a keep-alive comment
        const event =
          lines
            .find((l) => l.startsWith('event:'))
            ?.slice(6)
            .trim() ?? 'message';
        return { event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
      }
      const chunk = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (chunk.done || !chunk.value) return null;
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    next,
    close: () => controller.abort(),
  };
};
