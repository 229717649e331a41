import type { TracingSettings } from './config-settings.js';

/** OpenTelemetry's standard variables as the environment gave them (trimmed; null: unset or empty). */
export type OtelVariables = Readonly<{
  disabled: string | null;
  exporter: string | null;
  zipkinEndpoint: string | null;
  sampler: string | null;
  samplerArg: string | null;
  serviceName: string | null;
}>;

/** What the service's own variables say; each wins over OpenTelemetry's where both are set. */
export type ServiceTracingVariables = Readonly<{
  zipkinUrl: string | null;
  sampleRatio: number | null;
  serviceName: string | null;
}>;

export class OtelVariableError extends Error {}

const ZIPKIN_DEFAULT_ENDPOINT = 'http://localhost:9411/api/v2/spans';

/** The samplers this service can honour, as the share of new traces recorded; a ratio sampler reads its argument. */
const FIXED_SAMPLERS: Readonly<Record<string, number>> = {
  always_on: 1,
  parentbased_always_on: 1,
  always_off: 0,
  parentbased_always_off: 0,
};
const RATIO_SAMPLERS = new Set(['traceidratio', 'parentbased_traceidratio']);

const zipkinEndpointOf = (given: string | null): string => {
  const endpoint = given ?? ZIPKIN_DEFAULT_ENDPOINT;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol))
    throw new OtelVariableError(
      `OTEL_EXPORTER_ZIPKIN_ENDPOINT=${JSON.stringify(endpoint)} is not an http(s) URL`,
    );
  return endpoint;
};

const ratioOf = ({ sampler, samplerArg }: OtelVariables): number => {
  const name = (sampler ?? 'parentbased_always_on').toLowerCase();
  const fixed = FIXED_SAMPLERS[name];
  if (fixed !== undefined) return fixed;
  if (!RATIO_SAMPLERS.has(name))
    throw new OtelVariableError(
      `OTEL_TRACES_SAMPLER=${JSON.stringify(sampler)} is not one this service takes: ${[...Object.keys(FIXED_SAMPLERS), ...RATIO_SAMPLERS].join(', ')}`,
    );
  if (samplerArg === null) return 1;
  const ratio = Number(samplerArg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new OtelVariableError(
      `OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(samplerArg)} must be a number from 0 to 1`,
    );
  return ratio;
};

/**
 * The tracing the process runs with (null: off), as OpenTelemetry's SDKs read their variables: OTEL_SDK_DISABLED
 * is `true` in any case; OTEL_TRACES_EXPORTER a comma list, in any case, that must name `zipkin` (the one exporter
 * here; `none` or another leaves tracing off); a sampler's name in any case. A variable is read only where it
 * matters: a bad sampler argument stops nothing while tracing is off or the service's own ratio is set.
 */
export const tracingFrom = (
  service: ServiceTracingVariables,
  standard: OtelVariables,
): TracingSettings | null => {
  if (standard.disabled?.toLowerCase() === 'true') return null;
  const exporters = (standard.exporter ?? '').split(',').map((name) => name.trim().toLowerCase());
  const zipkinUrl =
    service.zipkinUrl ?? (exporters.includes('zipkin') ? zipkinEndpointOf(standard.zipkinEndpoint) : null);
  if (zipkinUrl === null) return null;
  return {
    zipkinUrl,
    sampleRatio: service.sampleRatio ?? ratioOf(standard),
    serviceName: service.serviceName ?? standard.serviceName,
  };
};
