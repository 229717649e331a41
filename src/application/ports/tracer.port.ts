/** What a span is, for the trace viewer: a request served, a call made, a message sent or handled, or work. */
export type SpanKind = 'server' | 'client' | 'producer' | 'consumer' | 'internal';

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export type SpanOptions = Readonly<{ kind?: SpanKind; attributes?: SpanAttributes }>;

/** The span being run: its trace context, and what is known only while it runs (the route, the status). */
export interface ActiveSpan {
  /** its W3C traceparent when it is sampled (what its children and its order's messages carry); else undefined */
  readonly traceparent: string | undefined;
  rename(name: string): void;
  set(attributes: SpanAttributes): void;
  /** marks the span failed, with what went wrong (a 5xx answer, a connection cut before the answer) */
  fail(message: string): void;
}

/**
 * Distributed tracing, as the application records it: spans around the steps of an order, in the buyer's trace
 * from the request to the consumer's commit. The trace context travels explicitly, never through an ambient
 * context: the request's span hands its traceparent to the order's command, the order's events and messages
 * keep it, and work done later, in another process, joins that trace. Only a sampled trace is carried on; the
 * steps of an unsampled one are plain calls.
 *
 * With tracing off every method is a plain call of `fn`: nothing is recorded, kept or sent.
 */
export interface Tracer {
  readonly enabled: boolean;
  /**
   * Whether a new trace is to be recorded, drawn by this service's ratio (never with tracing off). Asked before
   * anything is spent on a trace: an unsampled request or job run is a plain call, with no span at all. A
   * caller's `traceparent` has no say: its flags and its trace id are the caller's to pick.
   */
  draw(): boolean;
  /**
   * Runs fn in a span that starts a recorded trace (a request, a job's run) that `draw` chose; `caller`: the
   * `traceparent` a caller sent, whose trace it joins.
   */
  root<T>(
    name: string,
    fn: (span: ActiveSpan) => Promise<T>,
    options?: SpanOptions & Readonly<{ caller?: string | undefined }>,
  ): Promise<T>;
  /**
   * Runs fn in a span of the trace `parent` names; without a readable parent (unsampled, off), a plain call.
   */
  child<T>(
    name: string,
    parent: string | undefined,
    fn: (span: ActiveSpan) => Promise<T>,
    options?: SpanOptions,
  ): Promise<T>;
  /**
   * Runs fn once, recorded as a span in each trace the parents name (each distinct traceparent once; none
   * without): a batch's work — a group commit, a producer request, a consumer's batch — in every order's trace.
   */
  batch<T>(
    name: string,
    parents: readonly (string | undefined)[],
    fn: () => Promise<T>,
    options?: SpanOptions,
  ): Promise<T>;
  /**
   * Records a span that ran from `startedAt` (epoch ms) until now, in the trace `parent` names: for work whose
   * trace is learned while it runs (a release that reads the order's history). Nothing without a parent.
   */
  record(name: string, parent: string | undefined, startedAt: number, options?: SpanOptions): void;
}

/** A span that records nothing: what an unsampled step runs in. */
export const NO_SPAN: ActiveSpan = {
  traceparent: undefined,
  rename: () => undefined,
  set: () => undefined,
  fail: () => undefined,
};

/** Tracing off: nothing recorded, nothing carried. */
export const NO_TRACING: Tracer = {
  enabled: false,
  draw: () => false,
  root: (_name, fn) => fn(NO_SPAN),
  child: (_name, _parent, fn) => fn(NO_SPAN),
  batch: (_name, _parents, fn) => fn(),
  record: () => undefined,
};
