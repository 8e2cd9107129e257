/**
 * The Sequelize sample of docs/orm.md (the regions between `#region` and `#endregion` are
 * the doc's code, checked equal by `docs.test.ts`), run by `orm.test.ts`.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { Engine, IdSource, OrmSample, OrmSession } from './sample.js';
// #region sequelize
import {
  DataTypes,
  Op,
  Sequelize,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Model,
} from 'sequelize';
import { idBounds, Layout } from '@flurry/core';

const layout = Layout.from('twitter');

// DataTypes.BIGINT reads back as a string: pg's default for int8, and on MySQL/MariaDB with
// bigNumberStrings (Sequelize's own default there is a string past 2^53, a number below).
interface IdRow extends Model<InferAttributes<IdRow>, InferCreationAttributes<IdRow>> {
  id: CreationOptional<string>;
  body: string;
}

function connectSequelize(engine: Engine, connection: DatabaseConnection, ids: IdSource) {
  const sequelize = new Sequelize({
    dialect: engine === 'postgres' ? 'postgres' : 'mysql',
    host: connection.host,
    port: connection.port,
    username: connection.user,
    password: connection.password,
    database: connection.database,
    dialectOptions: engine === 'postgres' ? {} : { supportBigNumbers: true, bigNumberStrings: true },
    pool: { max: 1 },
    logging: false,
  });
  const unsigned = engine === 'postgres' ? DataTypes.BIGINT : DataTypes.BIGINT.UNSIGNED;
  // From the application: a defaultValue function runs for every row built without an id.
  const Event = sequelize.define<IdRow>(
    'Event',
    {
      id: { type: unsigned, primaryKey: true, defaultValue: () => ids.next().toString() },
      body: { type: DataTypes.TEXT, allowNull: false },
    },
    { tableName: 'events', timestamps: false },
  );
  // From the database: no defaultValue; inserts name only the body (fields: ['body']).
  const Order = sequelize.define<IdRow>(
    'Order',
    { id: { type: unsigned, primaryKey: true }, body: { type: DataTypes.TEXT, allowNull: false } },
    { tableName: 'orders', timestamps: false },
  );
  return { sequelize, Event, Order };
}

// A time window: the half-open ID range [min, maxExclusive), an index range scan.
function between(model: IdModel, from: Date, to: Date) {
  const { min, maxExclusive } = idBounds(layout, from, to);
  return model.findAll({
    where: { id: { [Op.gte]: min.toString(), [Op.lt]: maxExclusive.toString() } },
    order: [['id', 'ASC']],
  });
}

type IdModel = ReturnType<typeof connectSequelize>['Event'];

// Each row built without an id gets one from the defaultValue function.
async function addEvents(Event: IdModel, bodies: readonly string[]) {
  await Event.bulkCreate(bodies.map((body) => ({ body })));
}

// fields: ['body'] leaves the id out of the INSERT, so the database fills it.
async function addOrders(Order: IdModel, bodies: readonly string[]) {
  await Order.bulkCreate(
    bodies.map((body) => ({ body })),
    { fields: ['body'] },
  );
}

// JSON: each instance's toJSON() has the ID as a string.
async function eventsJson(Event: IdModel, from: Date, to: Date) {
  return JSON.stringify(await between(Event, from, to));
}
// #endregion sequelize

/** The Sequelize sample as the proof drives it. */
export const sequelizeSample: OrmSample = {
  name: 'Sequelize',
  open(engine, connection, ids): Promise<OrmSession> {
    const { sequelize, Event, Order } = connectSequelize(engine, connection, ids);
    return Promise.resolve({
      insert: (bodies) => addEvents(Event, bodies),
      insertDefault: (bodies) => addOrders(Order, bodies),
      window: async (from, to, table) =>
        (await between(table === 'orders' ? Order : Event, from, to)).map((r) => ({ id: BigInt(r.id), body: r.body })),
      json: (from, to) => eventsJson(Event, from, to),
      close: () => sequelize.close(),
    });
  },
};
