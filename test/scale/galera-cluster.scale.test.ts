import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GaleraCluster } from '../../scripts/cluster/galera-cluster.js';
import { eventually } from '../support/contract-helpers.js';

/**
 * The deployment's MySQL: three Galera nodes and the balancer in front of them, as `npm run cluster` starts
 * them. What an operator relies on: one writer at a time, chosen by the nodes' replication state rather than
 * an open port; a dead writer replaced within seconds; a killed node back by the writes it missed alone.
 */
describe('MySQL on a Galera cluster behind a single-writer balancer', () => {
  let galera: GaleraCluster;
  const logOf = (name: string) => fs.readFileSync(path.join(galera.dir, `${name}.err`), 'utf8');

  beforeAll(async () => {
    galera = await GaleraCluster.start();
  }, 180_000);

  afterAll(async () => {
    await galera?.stop();
  }, 60_000);

  it('starts a new cluster and joins the others by SST: three nodes synced in one primary component', async () => {
    await galera.whole();
    for (const node of galera.nodes)
      expect(await galera.state(node.name)).toEqual({ state: 'Synced', component: 'Primary', size: 3 });
    for (const joiner of ['galera-2', 'galera-3'])
      expect(logOf(joiner)).toContain('rsync SST completed on joiner');
    expect(await galera.writer()).toBe('galera-1');
  });

  it('takes a node that answers but is not synced out of the writes, and keeps the writer when it is back', async () => {
    await eventually(
      async () => expect(await galera.balancerView()).toMatchObject({ 'galera-1': 'UP' }),
      30_000,
      200,
    );
    const writer = await galera.writer();
    // desynced: its port is open and it answers queries, but it no longer applies the cluster's writes in step
    await galera.sql(writer, 'SET GLOBAL wsrep_desync = ON');
    try {
      await eventually(async () => expect(await galera.writer()).not.toBe(writer), 30_000, 200);
    } finally {
      await galera.sql(writer, 'SET GLOBAL wsrep_desync = OFF');
    }
    const next = await galera.writer();
    await eventually(async () => expect((await galera.balancerView())[writer]).toBe('UP'), 30_000, 200);
    // back and healthy, it stands by: the writes stay where they moved
    expect(await galera.writer()).toBe(next);
  });

  it('moves the writes to a live node within seconds of the writer being killed, and the killed node rejoins by IST', async () => {
    const writer = await galera.writer();
    await galera.sql(
      writer,
      'CREATE DATABASE IF NOT EXISTS drill; CREATE TABLE IF NOT EXISTS drill.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)',
    );
    await galera.sql(writer, 'INSERT INTO drill.t (v) VALUES (1), (2), (3)');
    await galera.kill(writer);
    await galera.writable();
    expect(await galera.writer()).not.toBe(writer);
    // writes it missed while it was down
    await galera.sql(await galera.writer(), 'INSERT INTO drill.t (v) VALUES (4), (5)');

    const fullCopies = (): number => logOf(writer).split('rsync SST completed on joiner').length - 1;
    const copiesBefore = fullCopies();
    await galera.restart(writer);
    await galera.whole();
    // the writes it missed, and no full copy
    expect(logOf(writer)).toMatch(/rsync IST completed on joiner[^]*Receiving IST: \d+ writesets/);
    expect(fullCopies()).toBe(copiesBefore);
    expect((await galera.sql(writer, 'SELECT GROUP_CONCAT(v ORDER BY v) FROM drill.t')).trim()).toBe(
      '1,2,3,4,5',
    );
    // Galera sets the auto-increment step to the cluster's size and each node's offset (1, 4, 7 on galera-1 of
    // three), and the new writer goes on above the ids it has: they rise with every insert, never repeating
    const rows = (await galera.sql(writer, 'SELECT id, v FROM drill.t ORDER BY v')).trim().split('\n');
    const ids = rows.map((row) => Number(row.split('\t')[0]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(5);
    expect(ids[1]! - ids[0]!).toBe(3);
  }, 120_000);
});
