import { Migration } from '@mikro-orm/migrations';

/** The first schema: event store, product (MySQL's word on stock), orders read model, outbox. */
export class Migration20261202000000 extends Migration {
  override up(): void {
    this.addSql(`
      CREATE TABLE event_store (
        position BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        stream_id VARCHAR(100) NOT NULL,
        stream_version INT NOT NULL,
        type VARCHAR(64) NOT NULL,
        payload JSON NOT NULL,
        metadata JSON NOT NULL,
        occurred_at DATETIME(3) NOT NULL,
        PRIMARY KEY (position),
        UNIQUE KEY event_store_stream_version_unique (stream_id, stream_version)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    this.addSql(`
      CREATE TABLE product (
        id INT UNSIGNED NOT NULL AUTO_INCREMENT,
        name VARCHAR(200) NOT NULL,
        stock INT NOT NULL,
        version INT NOT NULL DEFAULT 0,
        per_user_limit INT NOT NULL,
        max_per_order INT NOT NULL,
        sale_starts_at DATETIME(3) NULL,
        sale_ends_at DATETIME(3) NULL,
        PRIMARY KEY (id),
        CONSTRAINT product_stock_never_negative CHECK (stock >= 0)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    this.addSql(`
      CREATE TABLE orders (
        order_id VARCHAR(64) NOT NULL,
        user_id VARCHAR(64) NOT NULL,
        product_id INT UNSIGNED NOT NULL,
        quantity INT NOT NULL,
        status VARCHAR(16) NOT NULL,
        reason VARCHAR(32) NULL,
        reserved_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        PRIMARY KEY (order_id),
        KEY orders_product_status_index (product_id, status),
        KEY orders_status_updated_index (status, updated_at),
        KEY orders_user_product_index (user_id, product_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    this.addSql(`
      CREATE TABLE outbox_message (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        message_id VARCHAR(100) NOT NULL,
        order_id VARCHAR(64) NOT NULL,
        topic VARCHAR(100) NOT NULL,
        \`key\` VARCHAR(100) NOT NULL,
        payload TEXT NOT NULL,
        headers JSON NOT NULL,
        status TINYINT NOT NULL DEFAULT 0 COMMENT '0 pending, 1 sent, 2 consumed, -1 failed, -2 dead',
        attempts INT NOT NULL DEFAULT 0,
        last_error TEXT NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        PRIMARY KEY (id),
        UNIQUE KEY outbox_message_message_id_unique (message_id),
        KEY outbox_message_status_created_index (status, created_at),
        KEY outbox_message_order_index (order_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  override down(): void {
    this.addSql('DROP TABLE outbox_message');
    this.addSql('DROP TABLE orders');
    this.addSql('DROP TABLE product');
    this.addSql('DROP TABLE event_store');
  }
}
