import type { MikroORM } from '@mikro-orm/mysql';
import type { HealthCheck } from '../../application/index.js';

export class MySqlHealthCheck implements HealthCheck {
  readonly name = 'mysql';

  constructor(private readonly orm: MikroORM) {}

  async check(): Promise<void> {
    await this.orm.em.getConnection().execute('SELECT 1');
  }
}
