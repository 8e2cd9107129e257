// A feature (a folder: its routes, state and settings) keeps its state in its own slot of the routes'
// context; nothing outside it knows the state's type.
/** Each feature's state on one context, by slot. */
export type FeatureStates = Map<FeatureSlot<unknown>, unknown>;

interface Host {
  readonly features: FeatureStates;
}

/** The slot of one feature's state (the feature's module owns it). */
export class FeatureSlot<T> {
  constructor(readonly name: string) {}

  /** The feature's state on `ctx`, or undefined when the feature is off. */
  get(ctx: Host): T | undefined {
    return ctx.features.get(this) as T | undefined;
  }

  /** Sets (or, with undefined, clears) the feature's state on `ctx`. */
  set(ctx: Host, state: T | undefined): void {
    if (state === undefined) ctx.features.delete(this);
    else ctx.features.set(this, state);
  }
}
