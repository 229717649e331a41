import {
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind as OtelKind,
  SpanStatusCode,
  trace,
  type Tracer as OtelTracerApi,
  TraceFlags,
} from '@opentelemetry/api';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { ActiveSpan, SpanAttributes, SpanKind, SpanOptions, Tracer } from '../../application/index.js';

const KINDS: Record<SpanKind, OtelKind> = {
  server: OtelKind.SERVER,
  client: OtelKind.CLIENT,
  producer: OtelKind.PRODUCER,
  consumer: OtelKind.CONSUMER,
  internal: OtelKind.INTERNAL,
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The context a W3C traceparent names (an unreadable one names none: the root). `remote`: a caller's, whose
 * sampling decision the sampler does not take on trust; else one this deployment wrote (a message's, an order's).
 */
const contextOf = (traceparent: string | undefined, remote: boolean): Context => {
  const [, traceId, spanId, flags] = TRACEPARENT.exec(traceparent ?? '') ?? [];
  if (traceId === undefined || spanId === undefined || flags === undefined) return ROOT_CONTEXT;
  const traceFlags = parseInt(flags, 16) & TraceFlags.SAMPLED;
  const spanContext = { traceId, spanId, traceFlags, isRemote: remote };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
};

/** A span's traceparent when it is sampled: only a sampled trace is carried on. */
const traceparentOf = (span: Span): string | undefined => {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return (traceFlags & TraceFlags.SAMPLED) === 0 ? undefined : `00-${traceId}-${spanId}-01`;
};

const failed = (span: Span, error: unknown): void => {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
};

/**
 * The application's spans on OpenTelemetry's API. Every span is started with its parent named (no ambient
 * context: Node 20's AsyncLocalStorage would tax every promise of every request, traced or not), and a span that
 * is not sampled costs its sampler's decision and nothing more.
 */
export class OtelTracer implements Tracer {
  readonly enabled = true;

  constructor(private readonly tracer: OtelTracerApi) {}

  root<T>(
    name: string,
    fn: (span: ActiveSpan) => Promise<T>,
    options: SpanOptions & Readonly<{ caller?: string | undefined }> = {},
  ): Promise<T> {
    return this.run(name, contextOf(options.caller, true), fn, options);
  }

  child<T>(
    name: string,
    parent: string | undefined,
    fn: (span: ActiveSpan) => Promise<T>,
    options: SpanOptions = {},
  ): Promise<T> {
    if (parent === undefined) return fn(NOT_RECORDED);
    return this.run(name, contextOf(parent, false), fn, options);
  }

  async batch<T>(
    name: string,
    parents: readonly (string | undefined)[],
    fn: () => Promise<T>,
    options: SpanOptions = {},
  ): Promise<T> {
    const spans = this.startIn(name, parents, options, undefined);
    if (spans.length === 0) return fn();
    try {
      return await fn();
    } catch (error) {
      for (const span of spans) failed(span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  }

  record(name: string, parent: string | undefined, startedAt: number, options: SpanOptions = {}): void {
    for (const span of this.startIn(name, [parent], options, startedAt)) span.end();
  }

  private async run<T>(
    name: string,
    parent: Context,
    fn: (span: ActiveSpan) => Promise<T>,
    options: SpanOptions,
  ): Promise<T> {
    const span = this.tracer.startSpan(
      name,
      { kind: KINDS[options.kind ?? 'internal'], attributes: options.attributes },
      parent,
    );
    const active: ActiveSpan = {
      traceparent: traceparentOf(span),
      rename: (to) => span.updateName(to),
      set: (attributes: SpanAttributes) => span.setAttributes(attributes),
    };
    try {
      return await fn(active);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** One span per distinct parent, each in its parent's trace. */
  private startIn(
    name: string,
    parents: readonly (string | undefined)[],
    options: SpanOptions,
    startTime: number | undefined,
  ): Span[] {
    const distinct = new Set<string>();
    for (const parent of parents) if (parent !== undefined) distinct.add(parent);
    const started = {
      kind: KINDS[options.kind ?? 'internal'],
      attributes: { ...options.attributes, 'seckill.batch.traces': distinct.size },
      startTime,
    };
    return [...distinct].map((parent) => this.tracer.startSpan(name, started, contextOf(parent, false)));
  }
}

const NOT_RECORDED: ActiveSpan = { traceparent: undefined, rename: () => undefined, set: () => undefined };

/**
 * New traces by ratio, and so are callers' (a `traceparent` a client sent is no order to record); work carried on
 * from this deployment's own messages and orders keeps its trace's decision.
 */
export const samplerFor = (ratio: number): Sampler => {
  // a caller picks its trace id and flags: its requests are drawn at random, never by the id it chose
  const drawn: Sampler = {
    shouldSample: () => ({
      decision: Math.random() < ratio ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
    }),
    toString: () => `RandomRatio{${ratio}}`,
  };
  return new ParentBasedSampler({
    root: new TraceIdRatioBasedSampler(ratio),
    remoteParentSampled: drawn,
    remoteParentNotSampled: drawn,
  });
};

export type OtelTracingOptions = Readonly<{
  /** the process, as the trace viewer names it */
  serviceName: string;
  /** the share of new traces recorded, 0 to 1 */
  sampleRatio: number;
}> &
  (
    | Readonly<{ /** Zipkin's span intake: http://host:9411/api/v2/spans */ zipkinUrl: string }>
    | Readonly<{ exporter: SpanExporter }>
  );

export type OtelTracing = Readonly<{
  tracer: Tracer;
  /** sends the spans ended so far */
  flush: () => Promise<void>;
  shutdown: () => Promise<void>;
}>;

/**
 * OpenTelemetry's SDK for this process: spans batched to Zipkin (or to `exporter`), new traces sampled by ratio
 * (`samplerFor`). The provider is this process's tracer's alone: nothing global is registered, and no context
 * manager (the trace context travels explicitly).
 */
export const startOtelTracing = (options: OtelTracingOptions): OtelTracing => {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    sampler: samplerFor(options.sampleRatio),
    spanProcessors: [
      new BatchSpanProcessor(
        'exporter' in options ? options.exporter : new ZipkinExporter({ url: options.zipkinUrl }),
      ),
    ],
  });
  return {
    tracer: new OtelTracer(provider.getTracer('seckill')),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
};
