import { expect } from '@jest/globals';
import { eventually } from './contract-helpers.js';
import type { ApiClient } from './e2e-service.js';
import type { TestDatabase } from './mysql-database.js';

export type AuditLine = {
  productId: number;
  listed: number;
  added: number;
  sold: number;
  replayedStock: number;
  undecided: number;
  mysqlStock: number | null;
  gateStock: number | null;
};
export type AuditReport = {
  ok: boolean;
  violations: unknown[];
  products: AuditLine[];
  orders: Record<string, number>;
};

export const auditOf = async (api: ApiClient): Promise<AuditReport> =>
  (await api.request('GET', '/api/v1/admin/audit', { token: await api.token('auditor', 'admin') }))
    .body as AuditReport;

/**
 * Runs reconciliation (over HTTP) until the gate shows what MySQL shows for the product: it gives back, after
 * two readings, the units the gate held for reservations that died before MySQL.
 */
export const reconcileUntilGateAgrees = (api: ApiClient, productId: number, timeoutMs = 20_000) =>
  eventually(
    async () => {
      await api.request('POST', '/api/v1/admin/reconciliations', { token: await api.token('root', 'admin') });
      const line = (await auditOf(api)).products.find((p) => p.productId === productId);
      expect(line?.gateStock).toBe(line?.mysqlStock);
    },
    timeoutMs,
    400,
  );

/**
 * After a drill, once the pipeline has drained: the audit is clean, nothing is left undecided, and for each
 * product the replayed history, MySQL and the gate agree, with no unit sold beyond the stock.
 */
export const expectBooksAgree = async (
  api: ApiClient,
  productIds: readonly number[],
): Promise<AuditReport> => {
  const report = await auditOf(api);
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
  expect(report.orders['RESERVED'] ?? 0).toBe(0);
  for (const productId of productIds) {
    const line = report.products.find((p) => p.productId === productId);
    expect(line).toBeDefined();
    expect(line!.undecided).toBe(0);
    expect(line!.sold).toBeLessThanOrEqual(line!.listed + line!.added);
    expect(line!.mysqlStock).toBe(line!.replayedStock);
    expect(line!.gateStock).toBe(line!.mysqlStock);
  }
  return report;
};

/** Every order's stream holds its reservation and exactly one decision, whatever was delivered twice. */
export const expectEachOrderDecidedOnce = async (db: TestDatabase, orders: number): Promise<void> => {
  const streams = await db.orm.em
    .getConnection()
    .execute<Array<{ n: number }>>(
      "SELECT COUNT(*) AS n FROM event_store WHERE stream_id LIKE 'order-%' GROUP BY stream_id",
    );
  expect(streams).toHaveLength(orders);
  expect(streams.every((s) => Number(s.n) === 2)).toBe(true);
};

/**
 * The orders table agrees with MySQL's stock: for each product, the units its committed and paid orders hold
 * are exactly what left the stock (listed and restocked, minus what MySQL has now).
 */
export const expectOrdersAgree = async (
  db: TestDatabase,
  report: AuditReport,
  productIds: readonly number[],
): Promise<void> => {
  const rows = await db.orm.em
    .getConnection()
    .execute<Array<{ product_id: number; held: string | number }>>(
      "SELECT product_id, SUM(quantity) AS held FROM orders WHERE status IN ('COMMITTED', 'PAID') GROUP BY product_id",
    );
  for (const productId of productIds) {
    const line = report.products.find((p) => p.productId === productId)!;
    const held = Number(rows.find((r) => Number(r.product_id) === productId)?.held ?? 0);
    expect({ productId, held }).toEqual({ productId, held: line.listed + line.added - line.mysqlStock! });
  }
};
