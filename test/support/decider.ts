import { expect } from '@jest/globals';
import type { Decider } from '../../src/domain/index.js';

/** A pure aggregate: `decide` turns a command and state into events, `evolve` folds events into state. */
export type { Decider };

type ErrorType<E extends Error> = abstract new (...args: never[]) => E;

type Outcome<Event> = { threw: false; events: Event[] } | { threw: true; error: unknown };

export type DeciderSpecification<Command, Event> = (given: readonly Event[]) => Readonly<{
  when: (command: Command) => Readonly<{
    /** The command yields exactly these events. `then([])` means it already took effect. */
    then: (expected: readonly Event[]) => void;
    /** The command is refused with this error type; the error is returned so its fields can be checked. */
    thenThrows: <E extends Error>(errorType: ErrorType<E>) => E;
  }>;
}>;

/**
 * Emmett-style decider test: `given(history).when(command).then(events)` or `.thenThrows(ErrorType)`.
 * The history is folded with `evolve`, so a test states what happened, never the state it leads to.
 */
export const deciderSpecification =
  <Command, Event, State>(decider: Decider<Command, Event, State>): DeciderSpecification<Command, Event> =>
  (given) => ({
    when: (command) => {
      const run = (): Outcome<Event> => {
        const state = given.reduce(decider.evolve, decider.initialState);
        try {
          return { threw: false, events: decider.decide(command, state) };
        } catch (error) {
          return { threw: true, error };
        }
      };
      return {
        then: (expected) => {
          const outcome = run();
          if (outcome.threw) throw outcome.error;
          expect(outcome.events).toEqual(expected);
        },
        thenThrows: <E extends Error>(errorType: ErrorType<E>): E => {
          const outcome = run();
          if (!outcome.threw) {
            throw new Error(
              `expected ${errorType.name}, but decide returned ${JSON.stringify(outcome.events)}`,
            );
          }
          expect(outcome.error).toBeInstanceOf(errorType);
          return outcome.error as E;
        },
      };
    },
  });
