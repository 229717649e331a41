import { Migration } from '@mikro-orm/migrations';

/**
 * The event envelope and projection checkpoints. Each event gets an id, the schema version its data was
 * written with, and its correlation and causation ids as columns (an operator finds a request's every event
 * by its correlation id). Rows from before keep what their metadata said. `projection_checkpoint` records,
 * per projection being rebuilt, the global position it has applied up to.
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
        MODIFY correlation_id VARCHAR(100) NOT NULL,
        ADD KEY event_store_correlation_index (correlation_id)`);
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
        DROP KEY event_store_correlation_index,
        DROP COLUMN causation_id,
        DROP COLUMN correlation_id,
        DROP COLUMN schema_version,
        DROP COLUMN event_id`);
  }
}
