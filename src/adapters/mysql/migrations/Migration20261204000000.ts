import { Migration } from '@mikro-orm/migrations';

/**
 * Sale path tokens: a product may require every order to carry a single-use token, issued to the buyer
 * once the sale window is open. Products listed before take orders without one.
 */
export class Migration20261204000000 extends Migration {
  override up(): void {
    this.addSql(
      'ALTER TABLE product ADD COLUMN require_path_token TINYINT(1) NOT NULL DEFAULT 0 AFTER sale_ends_at',
    );
  }

  override down(): void {
    this.addSql('ALTER TABLE product DROP COLUMN require_path_token');
  }
}
