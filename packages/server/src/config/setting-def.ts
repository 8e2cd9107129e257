/**
 * The shape of one row of the `flurry serve` settings table (`settings.ts`, `settings-segments.ts`): type,
 * range, default and help line. The flag and the variable follow from the key (see `SETTINGS`).
 */
interface Common {
  /** One line on what it does. */
  readonly help: string;
  /** What values are allowed, when the type's own wording is not enough. */
  readonly allowed?: string;
  /** The default as shown in `--help` when there is no `default` value here (the default lives elsewhere). */
  readonly defaultText?: string;
  /** Hide the value in errors and logs. */
  readonly secret?: boolean;
  /**
   * The error code of a refused value when the setting is also a flag of the offline commands
   * (`next`, `layout`, `decode`, `public`): the same mistake gives the same code everywhere.
   * Settings only `flurry serve` has are refused with `FLURRY_E_CONFIG`.
   */
  readonly code?: string;
}

/** An integer from `min` to `max`. */
interface IntDef extends Common {
  readonly type: 'int';
  readonly min: number;
  readonly max: number;
  /** Shown after the range: `(ms)`. */
  readonly unit?: 'ms';
  /** Shown after the range in parentheses. */
  readonly note?: string;
  readonly default?: number;
}

/** true/false (also 1/0, yes/no from a variable); a flag without a value. */
interface BoolDef extends Common {
  readonly type: 'bool';
  readonly default: boolean;
}

/** Free text (1 to 4096 characters), optionally matching `pattern`. */
interface StringDef extends Common {
  readonly type: 'string';
  readonly pattern?: RegExp;
  readonly default?: string;
}

/** One of a fixed list. */
interface ChoiceDef extends Common {
  readonly type: 'choice';
  readonly choices: readonly string[];
  readonly default?: string;
}

/** The definition of one setting (one row of the table). */
export type SettingDef = IntDef | BoolDef | StringDef | ChoiceDef;
