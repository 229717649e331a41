/**
 * A Kafka-protocol test broker: librdkafka's mock cluster, which Debian's `kcat` carries. There is no Kafka
 * on the development and CI machines; this is a real Kafka-protocol server with 3 brokers that auto-creates
 * topics (4 partitions each). It reports no controller, so KafkaJS's admin.createTopics and idempotent
 * producer do not work against it.
 *
 * `npm run kafka:mock` starts one, prints its bootstrap list on stdout, and keeps it running until stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export type KafkaMock = Readonly<{
  /** comma list for SECKILL_KAFKA_BROKERS */
  brokers: string;
  /** kcat's own PID (kept from the spawn: kcat rewrites its argv, so it cannot be found by name) */
  pid: number;
  freeze: () => void;
  thaw: () => void;
  stop: () => Promise<void>;
}>;

const BOOTSTRAP = /bootstrap\.servers=([0-9.:,]+)/;

export const startKafkaMock = (
  options: Readonly<{ brokers?: number; timeoutMs?: number }> = {},
): Promise<KafkaMock> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      'kcat',
      [
        '-X',
        `test.mock.num.brokers=${options.brokers ?? 3}`,
        '-d',
        'mock',
        '-C',
        '-t',
        '_warmup',
        '-b',
        '127.0.0.1:1',
        '-q',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let seen = '';
    let found = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the kcat mock cluster printed no bootstrap.servers in time'));
    }, options.timeoutMs ?? 15_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start kcat (apt-get install kcat): ${error.message}`));
    });
    // the mock logs every request at debug level: keep reading, or the pipe fills and kcat blocks
    child.stderr?.on('data', (chunk: Buffer) => {
      if (found) return;
      seen += chunk.toString();
      const match = BOOTSTRAP.exec(seen);
      if (!match?.[1] || child.pid === undefined) return;
      found = true;
      seen = '';
      clearTimeout(timer);
      const pid = child.pid;
      resolve({
        brokers: match[1],
        pid,
        freeze: () => process.kill(pid, 'SIGSTOP'),
        thaw: () => process.kill(pid, 'SIGCONT'),
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            process.kill(pid, 'SIGCONT');
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => {
      if (!found) {
        clearTimeout(timer);
        reject(new Error(`kcat exited (${code}) before printing its bootstrap list`));
      }
    });
  });

const runAsScript = process.argv[1]?.endsWith('kafka-mock.js') ?? false;
if (runAsScript) {
  const mock = await startKafkaMock();
  process.stdout.write(`${mock.brokers}\n`);
  process.stderr.write(
    `kcat mock cluster running (pid ${mock.pid}); export SECKILL_KAFKA_BROKERS=${mock.brokers}\n`,
  );
  const stop = () => void mock.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
