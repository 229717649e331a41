import { Migration } from '@mikro-orm/migrations';

/**
 * The event envelope and projection checkpoints. Each event gets an id, the schema version its data was
 * written with, and its correlation and causation ids as columns. Rows from before keep what their metadata
 * said. The correlation id has no index on purpose: the ids are random, and on the accept path an index
 * entry per event cost a third of the orders per second and doubled p99 (see docs/benchmarks.md); finding a
 * request's events is an operator's query, answered by a scan. `projection_checkpoint` records, per
 * projection being rebuilt, the global position it has applied up to.
 */
export class Migration20261203000000 extends Migration {
  override up(): void {
    this.addSql(`
      ALTER TABLE event_store
        ADD COLUMN event_id CHAR(36) NULL AFTER position,
        ADD COLUMN schema_version SMALLINT UNSIGNED NOT NULL DEFAULT 1 AFTER type,
        ADD COLUMN correlation_id VARCHAR(100) NULL AFTER metadata,
        ADD COLUMN causation_id VARCHAR(100) NULL AFTER correlation_id`);
    this.addSql(`
      UPDATE event_store SET
        event_id = UUID(),
        correlation_id = COALESCE(JSON_VALUE(metadata, '$.correlationId'), stream_id),
        causation_id = JSON_VALUE(metadata, '$.causationId')`);
    this.addSql(`
      ALTER TABLE event_store
        MODIFY event_id CHAR(36) NOT NULL,
        MODIFY correlation_id VARCHAR(100) NOT NULL`);
    this.addSql(`
      CREATE TABLE projection_checkpoint (
        name VARCHAR(64) NOT NULL,
        position BIGINT UNSIGNED NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        PRIMARY KEY (name)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  override down(): void {
    this.addSql('DROP TABLE projection_checkpoint');
    this.addSql(`
      ALTER TABLE event_store
        DROP COLUMN causation_id,
        DROP COLUMN correlation_id,
        DROP COLUMN schema_version,
        DROP COLUMN event_id`);
  }
}
