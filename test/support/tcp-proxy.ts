import { createServer, type Server, type Socket, connect } from 'node:net';

/**
 * A loopback TCP proxy in front of a real server, to make that server "stop answering" (freeze: bytes are
 * held, connections stay open) or "go down" (every connection cut, new ones refused) on demand.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<[Socket, Socket]>();
  private frozen = false;
  /** bytes from clients held back while frozen, each for its upstream */
  private held: Array<[Socket, Buffer]> = [];
  private freezeMarker: Buffer | null = null;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free port, or on the same port again after `down()`. */
  async start(): Promise<this> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this;
  }

  freeze(): void {
    this.frozen = true;
    for (const [client, upstream] of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  /**
   * Freezes as the first client bytes holding `marker` arrive (a statement's text): those bytes and everything
   * after them are held until `thaw()`, what came before went through.
   */
  freezeOn(marker: string): void {
    this.freezeMarker = Buffer.from(marker);
  }

  thaw(): void {
    this.frozen = false;
    for (const [upstream, chunk] of this.held.splice(0)) upstream.write(chunk);
    for (const [client, upstream] of this.pairs) {
      client.resume();
      upstream.resume();
    }
  }

  /** Cuts every connection and refuses new ones. */
  async down(): Promise<void> {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (this.freezeMarker && chunk.includes(this.freezeMarker)) {
        this.freezeMarker = null;
        this.freeze();
      }
      if (this.frozen) this.held.push([upstream, chunk]);
      else upstream.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.pipe(client);
    if (this.frozen) {
      client.pause();
      upstream.pause();
    }
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  }
}
