/**
 * The TypeORM sample of docs/orm.md (the regions between `#region` and `#endregion` are the
 * doc's code, checked equal by `docs.test.ts`), run by `orm.test.ts`. Entities are
 * `EntitySchema`s, so the sample needs no decorator settings in tsconfig.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { Engine, IdSource, OrmSample, OrmSession } from './sample.js';
// #region typeorm
import {
  And,
  DataSource,
  EntitySchema,
  LessThan,
  MoreThanOrEqual,
  type EntitySubscriberInterface,
  type InsertEvent,
} from 'typeorm';
import { idBounds, Layout } from '@flurry/core';

const layout = Layout.from('twitter');

// TypeORM reads a bigint column as a string by default (pg's int8 text; on MySQL/MariaDB it
// sets mysql2's supportBigNumbers and bigNumberStrings itself), and writes strings back.
interface IdRow {
  id: string;
  body: string;
}
const idColumns = (engine: Engine) =>
  ({
    id: { type: 'bigint', primary: true, unsigned: engine === 'mariadb' },
    body: { type: 'text' },
  }) as const;

function connectTypeorm(engine: Engine, connection: DatabaseConnection, ids: IdSource) {
  const Event = new EntitySchema<IdRow>({ name: 'Event', tableName: 'events', columns: idColumns(engine) });
  const Order = new EntitySchema<IdRow>({ name: 'Order', tableName: 'orders', columns: idColumns(engine) });
  // From the application: a subscriber fills the id of an Event inserted without one.
  class EventIds implements EntitySubscriberInterface<IdRow> {
    listenTo() {
      return 'Event';
    }
    beforeInsert(event: InsertEvent<IdRow>) {
      event.entity.id ??= ids.next().toString();
    }
  }
  const dataSource = new DataSource({
    type: engine === 'postgres' ? 'postgres' : 'mysql',
    host: connection.host,
    port: connection.port,
    username: connection.user,
    password: connection.password,
    database: connection.database,
    entities: [Event, Order],
    poolSize: 1,
  });
  // Subscriber classes in `subscribers` need the @EventSubscriber() decorator; an instance
  // added after initialize() needs none.
  const start = async () => {
    await dataSource.initialize();
    dataSource.subscribers.push(new EventIds());
  };
  return { dataSource, start, Event, Order };
}

// A time window: the half-open ID range [min, maxExclusive), an index range scan.
function between(dataSource: DataSource, entity: EntitySchema<IdRow>, from: Date, to: Date) {
  const { min, maxExclusive } = idBounds(layout, from, to);
  return dataSource.getRepository(entity).find({
    where: { id: And(MoreThanOrEqual(min.toString()), LessThan(maxExclusive.toString())) },
    order: { id: 'ASC' },
  });
}

// insert() runs the subscriber for every row: each Event gets its id from the application.
async function addEvents(dataSource: DataSource, Event: EntitySchema<IdRow>, bodies: readonly string[]) {
  await dataSource.getRepository(Event).insert(bodies.map((body) => ({ body })));
}

// No subscriber on Order: the id is left out and the database fills it.
async function addOrders(dataSource: DataSource, Order: EntitySchema<IdRow>, bodies: readonly string[]) {
  await dataSource.getRepository(Order).insert(bodies.map((body) => ({ body })));
}

// JSON: the IDs are strings already.
async function eventsJson(dataSource: DataSource, Event: EntitySchema<IdRow>, from: Date, to: Date) {
  return JSON.stringify(await between(dataSource, Event, from, to));
}
// #endregion typeorm

/** The TypeORM sample as the proof drives it. */
export const typeormSample: OrmSample = {
  name: 'TypeORM',
  async open(engine, connection, ids): Promise<OrmSession> {
    const { dataSource, start, Event, Order } = connectTypeorm(engine, connection, ids);
    await start();
    return {
      insert: (bodies) => addEvents(dataSource, Event, bodies),
      insertDefault: (bodies) => addOrders(dataSource, Order, bodies),
      json: (from, to) => eventsJson(dataSource, Event, from, to),
      window: async (from, to, table) =>
        (await between(dataSource, table === 'orders' ? Order : Event, from, to)).map((r) => ({
          id: BigInt(r.id),
          body: r.body,
        })),
      close: () => dataSource.destroy(),
    };
  },
};
