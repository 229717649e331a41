import { expect } from '@jest/globals';
import type { ApiClient } from './e2e-service.js';

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
