/** The client's calls to the service: JSON over fetch, with a clear error when nothing answers. */

const CALL_TIMEOUT_MS = 10_000;

export type Answer = Readonly<{ status: number; body: unknown }>;

export class ServiceUnreachable extends Error {
  constructor(url: string, cause: unknown) {
    super(
      `no seckill service answers at ${url} (${describeCause(cause)}); start it with \`npx seckill all\` (or npm start), or pass --url`,
    );
    this.name = 'ServiceUnreachable';
  }
}

const describeCause = (error: unknown): string => {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
};

export const field = (body: unknown, name: string): unknown =>
  typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;

export const parseJson = (text: string): unknown => {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return text;
  }
};

export const call = async (
  base: string,
  path: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<Answer> => {
  const headers: Record<string, string> = {};
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ServiceUnreachable(base, error);
  }
  return { status: response.status, body: parseJson(await response.text()) };
};

/** An error that says what the service answered, and what to check on a 401 or 403. */
export const explain = (what: string, answer: Answer): Error => {
  const code = field(answer.body, 'code');
  const detail = field(answer.body, 'detail');
  const hint =
    answer.status === 401 || answer.status === 403
      ? ' — is SECKILL_JWT_SECRET the same here as in the service?'
      : '';
  const text = typeof detail === 'string' ? detail : JSON.stringify(answer.body);
  return new Error(
    `${what} answered ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}: ${text}${hint}`,
  );
};

export const sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms));
