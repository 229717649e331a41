/** What the local clusters' scripts do with the processes they start and the servers they wait for. */
import type { ChildProcess } from 'node:child_process';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `probe` answers true, asking every 100 ms for at most `timeoutMs`. A probe that rejects (a
 * server not answering yet) is asked again; one that throws at once (the process it waits for has exited) ends
 * the wait with its error.
 */
export const waitFor = async (
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(probe()).catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
};

export const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/** Resolves once the process has exited (at once if it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  running(child) ? new Promise((resolve) => child.once('exit', () => resolve())) : Promise.resolve();
