/** `@flurry/segments`: segment mode (Leaf's 号段), docs/segments.md. */
export { SequenceErrorCode, sequenceError } from './errors.js';
export type { Allocation, CreateKeyOptions, KeyInfo, SegmentStore } from './store.js';
export { parseSerialFormat, periodOf, renderSerial } from './format.js';
export type { CalendarParts, ResetPeriod, SerialFormat } from './format.js';
export { parseStoreUrl, type ParsedStoreUrl } from './url.js';
export * from './sequence.js';
export { openSequences, Sequences, Serial, type SerialOptions } from './sequences.js';
export { createMemoryStore } from './stores/memory.js';
