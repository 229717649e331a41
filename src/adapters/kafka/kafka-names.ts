/**
 * Topic and consumer-group names on the broker: the service's own names, behind an optional namespace
 * (`SECKILL_KAFKA_NAMESPACE`), so that several deployments or test runs share one cluster without reading
 * each other's messages. Without a namespace the names are the service's (`seckill.orders.reserved`, …).
 */
export class KafkaNames {
  constructor(readonly namespace = '') {}

  topic(name: string): string {
    return this.prefixed(name);
  }

  group(name: string): string {
    return this.prefixed(name);
  }

  private prefixed(name: string): string {
    return this.namespace ? `${this.namespace}.${name}` : name;
  }
}
