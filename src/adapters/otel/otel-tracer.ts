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
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  type ActiveSpan,
  NO_SPAN,
  type SpanAttributes,
  type SpanKind,
  type SpanOptions,
  type Tracer,
} from '../../application/index.js';

const KINDS: Record<SpanKind, OtelKind> = {
  server: OtelKind.SERVER,
  client: OtelKind.CLIENT,
  producer: OtelKind.PRODUCER,
  consumer: OtelKind.CONSUMER,
  internal: OtelKind.INTERNAL,
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The context a W3C traceparent names; undefined for an unreadable one. `remote`: a caller's; else one this
 * deployment wrote (a message's, an order's), whose sampled flag the sampler follows.
 */
const contextOf = (traceparent: string | undefined, remote: boolean): Context | undefined => {
  const [, traceId, spanId, flags] = TRACEPARENT.exec(traceparent ?? '') ?? [];
  if (traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  const traceFlags = parseInt(flags, 16) & TraceFlags.SAMPLED;
  const spanContext = { traceId, spanId, traceFlags, isRemote: remote };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
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
 * context: Node 20's AsyncLocalStorage would tax every promise of every request, traced or not). A new trace is
 * drawn by `sampleRatio` before any span is made: an unsampled request costs one random number.
 */
export class OtelTracer implements Tracer {
  readonly enabled = true;

  constructor(
    private readonly tracer: OtelTracerApi,
    private readonly sampleRatio: number,
  ) {}

  draw(): boolean {
    return this.sampleRatio >= 1 || Math.random() < this.sampleRatio;
  }

  root<T>(
    name: string,
    fn: (span: ActiveSpan) => Promise<T>,
    options: SpanOptions & Readonly<{ caller?: string | undefined }> = {},
  ): Promise<T> {
    return this.run(name, contextOf(options.caller, true) ?? ROOT_CONTEXT, fn, options);
  }

  child<T>(
    name: string,
    parent: string | undefined,
    fn: (span: ActiveSpan) => Promise<T>,
    options: SpanOptions = {},
  ): Promise<T> {
    const context = contextOf(parent, false);
    if (context === undefined) return fn(NO_SPAN);
    return this.run(name, context, fn, options);
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
      fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
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

  /** One span per distinct readable parent, each in its parent's trace. */
  private startIn(
    name: string,
    parents: readonly (string | undefined)[],
    options: SpanOptions,
    startTime: number | undefined,
  ): Span[] {
    const contexts = new Map<string, Context>();
    for (const parent of parents) {
      if (parent === undefined || contexts.has(parent)) continue;
      const context = contextOf(parent, false);
      if (context !== undefined) contexts.set(parent, context);
    }
    if (contexts.size === 0) return [];
    const started = {
      kind: KINDS[options.kind ?? 'internal'],
      attributes: { ...options.attributes, 'seckill.batch.traces': contexts.size },
      startTime,
    };
    return [...contexts.values()].map((context) => this.tracer.startSpan(name, started, context));
  }
}

/**
 * The SDK's sampler under `OtelTracer`: a new trace, or a caller's, was drawn before its root span was asked for,
 * so a root is always recorded, whatever flags a caller sent; work carried on from this deployment's own messages
 * and orders keeps its trace's decision.
 */
export const carriedOnSampler = (): Sampler =>
  new ParentBasedSampler({
    root: new AlwaysOnSampler(),
    remoteParentSampled: new AlwaysOnSampler(),
    remoteParentNotSampled: new AlwaysOnSampler(),
  });

export type OtelTracingOptions = Readonly<{
  /** the process, as the trace viewer names it */
  serviceName: string;
  /** the share of new traces recorded, 0 to 1 (drawn at random: never by a trace id a caller picked) */
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
 * (`OtelTracer.draw`). The provider is this process's tracer's alone: nothing global is registered, and no context
 * manager (the trace context travels explicitly).
 */
export const startOtelTracing = (options: OtelTracingOptions): OtelTracing => {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    sampler: carriedOnSampler(),
    spanProcessors: [
      new BatchSpanProcessor(
        'exporter' in options ? options.exporter : new ZipkinExporter({ url: options.zipkinUrl }),
      ),
    ],
  });
  return {
    tracer: new OtelTracer(provider.getTracer('seckill'), options.sampleRatio),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
};
