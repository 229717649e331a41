/** Raised by adapters when a server they need is down or does not answer in time. Answered with 503. */
export class InfrastructureUnavailable extends Error {
  constructor(
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} unavailable: ${message}`, options);
    this.name = 'InfrastructureUnavailable';
  }
}

/** A stream was appended at a version other than the expected one: somebody else wrote first. */
export class VersionConflict extends Error {
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
  ) {
    super(`stream ${streamId} is not at version ${expectedVersion}`);
    this.name = 'VersionConflict';
  }
}
