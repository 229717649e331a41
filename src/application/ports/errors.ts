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

/**
 * The commit was sent and its answer never came (the connection was cut, the deadline passed meanwhile): the
 * transaction may have landed or not. Whoever holds something for it (a unit in the gate, a buyer's key) keeps
 * it, so that a repeat finds what the first try made instead of making it twice. Answered with 503.
 */
export class CommitOutcomeUnknown extends InfrastructureUnavailable {
  constructor(dependency: string, message: string, options?: { cause?: unknown }) {
    super(dependency, message, options);
    this.name = 'CommitOutcomeUnknown';
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
