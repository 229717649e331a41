import { describe, expect, it } from '@jest/globals';
import { GroupCommit } from '../../../src/application/index.js';

/** A write that records its batches and finishes only when the test says so. */
const heldWrites = () => {
  const batches: string[][] = [];
  const finishers: Array<(error?: Error) => void> = [];
  const write = (batch: readonly string[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push([...batch]);
      finishers.push((error) => (error ? reject(error) : resolve()));
    });
  const finish = (i: number, error?: Error) => finishers[i]!(error);
  return { batches, write, finish };
};

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes a full batch at once, without waiting for the bound', async () => {
    const { batches, write, finish } = heldWrites();
    const journal = new GroupCommit(write, { maxBatch: 3, maxWaitMs: 60_000, maxConcurrent: 1 });

    const answers = ['a', 'b', 'c'].map((item) => journal.submit(item));
    await tick();

    expect(batches).toEqual([['a', 'b', 'c']]);
    finish(0);
    await expect(Promise.all(answers)).resolves.toEqual([undefined, undefined, undefined]);
  });

  it('writes what arrived within the bound together, once the first item has waited it', async () => {
    const batches: string[][] = [];
    const journal = new GroupCommit<string>(
      (batch) => {
        batches.push([...batch]);
        return Promise.resolve();
      },
      { maxBatch: 100, maxWaitMs: 5, maxConcurrent: 1 },
    );

    const first = journal.submit('a');
    const second = journal.submit('b');
    await tick();
    expect(batches).toEqual([]);

    await Promise.all([first, second]);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('answers no caller before its batch is written', async () => {
    const { write, finish } = heldWrites();
    const journal = new GroupCommit(write, { maxBatch: 2, maxWaitMs: 0, maxConcurrent: 1 });
    let answered = false;
    const answer = journal.submit('a').then(() => (answered = true));
    void journal.submit('b');

    await tick();
    expect(answered).toBe(false);
    finish(0);
    await answer;
    expect(answered).toBe(true);
  });

  it('while the allowed batches are being written, gathers what arrives into the next one', async () => {
    const { batches, write, finish } = heldWrites();
    const journal = new GroupCommit(write, { maxBatch: 100, maxWaitMs: 0, maxConcurrent: 1 });

    const first = journal.submit('a');
    await tick();
    const later = ['b', 'c', 'd'].map((item) => journal.submit(item));
    await tick();
    expect(batches).toEqual([['a']]);

    finish(0);
    await first;
    await tick();
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    finish(1);
    await Promise.all(later);
  });

  it('gives the error of a failed batch to every caller of that batch, and only to them', async () => {
    const { batches, write, finish } = heldWrites();
    const journal = new GroupCommit(write, { maxBatch: 2, maxWaitMs: 0, maxConcurrent: 2 });
    const failed = [journal.submit('a'), journal.submit('b')];
    const written = [journal.submit('c'), journal.submit('d')];
    await tick();
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);

    const error = new Error('deadlock');
    finish(0, error);
    finish(1);

    await expect(failed[0]).rejects.toBe(error);
    await expect(failed[1]).rejects.toBe(error);
    await expect(Promise.all(written)).resolves.toEqual([undefined, undefined]);
    // the journal goes on after a failure
    const next = journal.submit('e');
    await tick();
    finish(2);
    await expect(next).resolves.toBeUndefined();
    expect(batches.at(-1)).toEqual(['e']);
  });

  it('settles once everything submitted has been written', async () => {
    const { write, finish } = heldWrites();
    const journal = new GroupCommit(write, { maxBatch: 1, maxWaitMs: 0, maxConcurrent: 1 });
    void journal.submit('a');
    void journal.submit('b');
    let settled = false;
    const settling = journal.settled().then(() => (settled = true));

    await tick();
    finish(0);
    await tick();
    expect(settled).toBe(false);
    finish(1);
    await settling;
    expect(journal.busy).toBe(false);
  });
});
