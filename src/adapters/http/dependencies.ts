import type { IncomingMessage } from 'node:http';
import type {
  AuditHistory,
  IdGenerator,
  IssueSalePath,
  Logger,
  ManageProducts,
  PayOrder,
  PlaceOrder,
  Queries,
  RateBudgets,
  ReadinessProbe,
  ReconcileStock,
  ReleaseOrder,
  SaleDashboard,
  Tracer,
  WatchOrder,
} from '../../application/index.js';
import type { AnswerRates } from './answer-rates.js';
import type { JwtTokens } from './tokens.js';

/** What the HTTP layer reports about the requests it answers (Prometheus, in the service). */
export type HttpObserver = {
  request(method: string, route: string, status: number, seconds: number): void;
  orderAnswer(code: string): void;
  render(): Promise<{ contentType: string; body: string }>;
};

export type HttpDependencies = Readonly<{
  placeOrder: PlaceOrder;
  payOrder: PayOrder;
  releaseOrder: ReleaseOrder;
  manageProducts: ManageProducts;
  reconcile: ReconcileStock;
  audit: AuditHistory;
  queries: Queries;
  watchOrder: WatchOrder;
  salePath: IssueSalePath;
  tokens: JwtTokens;
  /** the routes' budgets (docs/operations.md, Admission control), each null when off */
  budgets: RateBudgets;
  /** order requests this process works on at once (0: no bound) */
  ordersInFlightMax: number;
  /** express's `trust proxy`: which hops may name the client in X-Forwarded-For */
  trustProxy: boolean | number | string;
  /** /readyz's checks, shared with the metrics listener and bounded in rate */
  readinessProbe: Pick<ReadinessProbe, 'outcomes'>;
  observer: HttpObserver;
  logger: Logger;
  ids: IdGenerator;
  dashboard: SaleDashboard;
  /** the service's version, shown in the OpenAPI document */
  version: string;
  /** names this process in the dashboard's rates (they are counted per process) */
  instance: string;
  /** the credential that opens GET /metrics on the API port (SECKILL_METRICS_TOKEN); null: closed there */
  metricsToken: string | null;
  /** a server span per request when tracing is on (absent: off) */
  tracer?: Tracer;
  /**
   * `POST /api/v1/dev/login` hands out buyers' tokens (the buyer's page's demo sign-in): only where tokens are
   * signed with the public development secret, on this machine alone
   */
  devLogin?: boolean;
}>;

/** What every route gets: the dependencies, and this process's order answer rates (counted by the order route,
 * shown by the dashboard's). */
export type RouteContext = HttpDependencies &
  Readonly<{
    rates: AnswerRates;
    /** the bound on orders in flight in this process (middleware/admission.ts) */
    inFlight: Readonly<{ enter(): boolean; leave(): void }>;
    /** express's `req.ip`: the socket's address, or the client an X-Forwarded-For names through trusted proxies */
    clientAddress: (req: IncomingMessage) => string;
  }>;
