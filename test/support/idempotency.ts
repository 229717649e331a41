import { connect } from 'node:net';
import type { ApiClient, Answer } from './e2e-service.js';

/**
 * Sends an order and drops its answer: the request goes out whole, and the connection is cut as soon as the
 * first byte of the answer comes back, unread, as a buyer whose mobile connection broke would see it.
 * Resolves once the service has started answering (so it has done what it was going to do).
 */
export const orderWithAnswerDropped = (
  baseUrl: string,
  token: string,
  body: unknown,
  idempotencyKey: string,
): Promise<void> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl);
    const json = JSON.stringify(body);
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        [
          'POST /api/v1/seckill/orders HTTP/1.1',
          `Host: ${url.host}`,
          `Authorization: Bearer ${token}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(json)}`,
          `Idempotency-Key: ${idempotencyKey}`,
          'Connection: close',
          '',
          json,
        ].join('\r\n'),
      );
    });
    socket.once('data', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
    socket.once('close', () => resolve());
  });

/** An order placed with an Idempotency-Key, answered. */
export const orderWithKey = async (
  api: ApiClient,
  token: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
): Promise<Answer & { headers: Headers }> =>
  api.request('POST', '/api/v1/seckill/orders', {
    token,
    json: body,
    headers: { 'idempotency-key': idempotencyKey },
  });

export type MyOrders = Readonly<{
  orders: Array<Record<string, unknown>>;
  next: string | null;
}>;

/** The buyer's own orders, as GET /api/v1/orders answers them. */
export const myOrders = async (api: ApiClient, token: string, query = ''): Promise<MyOrders> => {
  const answer = await api.request('GET', `/api/v1/orders${query}`, { token });
  if (answer.status !== 200) throw new Error(`my orders: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as unknown as MyOrders;
};
