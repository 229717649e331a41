/**
 * A pure aggregate (emmett's Decider): `decide` turns a command and the current state into new events or a
 * typed refusal; `evolve` folds an event into the state; `initialState` is the state of a stream that does
 * not exist yet. The application's command handler runs every change through one of these.
 */
export type Decider<Command, Event, State> = Readonly<{
  decide: (command: Command, state: State) => Event[];
  evolve: (state: State, event: Event) => State;
  initialState: State;
}>;
