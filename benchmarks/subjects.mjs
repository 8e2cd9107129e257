// The benchmark subjects: Flurry in several configurations and its npm peers.
// Each subject has `create()` → a function returning one ID, and `key(id)` → a value
// that compares (< and >) in the subject's own ID order, used for the duplicate and
// order checks. `batch()` (optional) → a function filling a BigUint64Array.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const core = () => import('../packages/core/dist/index.js');
const big = (x) => x;
const TWITTER_EPOCH = 1288834974657;

export const subjects = {
  // --- Flurry -------------------------------------------------------------
  'flurry (twitter, wait)': {
    peer: false,
    async create() {
      const { Generator } = await core();
      const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 } });
      return () => g.next();
    },
    async batch() {
      const { Generator } = await core();
      const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 2 } });
      return (arr) => g.fill(arr);
    },
    key: big,
  },
  'flurry (twitter, borrow)': {
    peer: false,
    async create() {
      const { Generator } = await core();
      const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, onExhausted: 'borrow' });
      return () => g.next();
    },
    async batch() {
      const { Generator } = await core();
      const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 2 }, onExhausted: 'borrow' });
      return (arr) => g.fill(arr);
    },
    key: big,
  },
  'flurry (22-bit sequence)': {
    peer: false,
    async create() {
      const { Generator, Layout } = await core();
      const layout = Layout.from({
        name: 'wide-seq',
        fields: [
          { name: 'timestamp', bits: 41 },
          { name: 'sequence', bits: 22 },
        ],
        epoch: TWITTER_EPOCH,
      });
      const g = new Generator({ layout, node: {} });
      return () => g.next();
    },
    async batch() {
      const { Generator, Layout } = await core();
      const layout = Layout.from({
        name: 'wide-seq-b',
        fields: [
          { name: 'worker', bits: 1 },
          { name: 'timestamp', bits: 41 },
          { name: 'sequence', bits: 21 },
        ],
        epoch: TWITTER_EPOCH,
      });
      const g = new Generator({ layout, node: { worker: 1 } });
      return (arr) => g.fill(arr);
    },
    key: big,
  },
  // --- peers --------------------------------------------------------------
  '@sapphire/snowflake': {
    peer: true,
    async create() {
      const { Snowflake } = require('@sapphire/snowflake');
      const s = new Snowflake(BigInt(TWITTER_EPOCH));
      return () => s.generate();
    },
    key: big,
  },
  'nodejs-snowflake': {
    peer: true,
    async create() {
      const { Snowflake } = require('nodejs-snowflake');
      const s = new Snowflake({ custom_epoch: TWITTER_EPOCH, instance_id: 1 });
      return () => s.getUniqueID();
    },
    key: (x) => BigInt(x),
  },
  'flake-idgen': {
    peer: true,
    async create() {
      const FlakeId = require('flake-idgen');
      const f = new FlakeId({ id: 1, epoch: TWITTER_EPOCH });
      return () => f.next();
    },
    key: (buf) => buf.readBigUInt64BE(0),
  },
  'simple-flakeid': {
    peer: true,
    async create() {
      const { SnowflakeIdv1 } = require('simple-flakeid');
      const s = new SnowflakeIdv1({ workerId: 1 });
      return () => s.NextId();
    },
    key: (x) => BigInt(x),
  },
  'uuid v7': {
    peer: true,
    async create() {
      const { v7 } = await import('uuid');
      return () => v7();
    },
    key: (s) => s,
  },
  'ulid (monotonic)': {
    peer: true,
    async create() {
      const { monotonicFactory } = await import('ulid');
      const u = monotonicFactory();
      return () => u();
    },
    key: (s) => s,
  },
  hyperid: {
    peer: true,
    note: 'not time-ordered by design (random prefix + counter)',
    async create() {
      const hyperid = require('hyperid');
      const h = hyperid();
      return () => h();
    },
    key: (s) => s,
  },
};
