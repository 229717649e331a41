/**
 * What a child process allocates over a stretch of time, by where the code lives: V8's sampling heap profiler,
 * driven over the child's inspector port (`node --inspect=127.0.0.1:<port>`), counting every sampled allocation,
 * the ones the garbage collector has freed since included. The bench process needs Node's WebSocket client
 * (`node --experimental-websocket` on Node 20).
 */
import { bucketOf, type CallFrame, frameLabel } from './cpu-profile.js';

type HeapNode = Readonly<{ callFrame: CallFrame; selfSize: number; children: readonly HeapNode[] }>;
type HeapProfile = Readonly<{ head: HeapNode }>;

/** The inspector flag that lets `samplingAllocations` reach a child. */
export const inspectorFlag = (port: number): string => `--inspect=127.0.0.1:${port}`;

type Socket = {
  onopen: (() => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  send(data: string): void;
  close(): void;
};

const webSocket = (url: string): Socket => {
  const Client = (globalThis as unknown as { WebSocket?: new (url: string) => Socket }).WebSocket;
  if (!Client)
    throw new Error('no WebSocket client in this Node: run the bench with --experimental-websocket');
  return new Client(url);
};

/** One Chrome DevTools Protocol session on a child's inspector port. */
const connect = async (port: number) => {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const socket = webSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = (event) => reject(new Error(`inspector on port ${port}: ${String(event)}`));
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 0;
  socket.onmessage = ({ data }) => {
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id!);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  };
  const post = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      next += 1;
      pending.set(next, { resolve: resolve as (value: unknown) => void, reject });
      socket.send(JSON.stringify({ id: next, method, params }));
    });
  return { post, close: () => socket.close() };
};

export type Allocations = Readonly<{
  /** MB sampled over the stretch (V8 samples about one allocation per SAMPLING_INTERVAL_BYTES allocated) */
  sampledMb: number;
  /** by where the allocating code lives, largest first */
  buckets: ReadonlyArray<Readonly<{ name: string; mb: number; share: number }>>;
  /** the functions that allocated the most, largest first */
  functions: ReadonlyArray<Readonly<{ name: string; mb: number; share: number }>>;
}>;

const SAMPLING_INTERVAL_BYTES = 16_384;
const MB = 1024 * 1024;

/**
 * What is counted: every allocation, or only what outlived the young generation (`survivors`: an object that a
 * scavenge freed is left out, so what is left was promoted to the old generation — or is still alive — and is
 * what the full collections work through).
 */
export type Sampled = 'all' | 'survivors';

/** Starts sampling a child's allocations; the answer stops it and says what was allocated meanwhile. */
export const samplingAllocations = async (
  port: number,
  sampled: Sampled = 'all',
  top = 25,
): Promise<() => Promise<Allocations>> => {
  const session = await connect(port);
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: sampled === 'all',
  });
  return async () => {
    try {
      const { profile } = await session.post<{ profile: HeapProfile }>('HeapProfiler.stopSampling');
      const buckets = new Map<string, number>();
      const functions = new Map<string, number>();
      let total = 0;
      const walk = (node: HeapNode) => {
        if (node.selfSize > 0) {
          total += node.selfSize;
          const bucket = bucketOf(node.callFrame);
          buckets.set(bucket, (buckets.get(bucket) ?? 0) + node.selfSize);
          const name = frameLabel(node.callFrame);
          functions.set(name, (functions.get(name) ?? 0) + node.selfSize);
        }
        for (const child of node.children) walk(child);
      };
      walk(profile.head);
      const shares = (map: Map<string, number>, limit: number) =>
        [...map.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, limit)
          .map(([name, bytes]) => ({
            name,
            mb: Math.round((bytes / MB) * 10) / 10,
            share: total ? bytes / total : 0,
          }));
      return {
        sampledMb: Math.round((total / MB) * 10) / 10,
        buckets: shares(buckets, Number.MAX_SAFE_INTEGER),
        functions: shares(functions, top),
      };
    } finally {
      session.close();
    }
  };
};
