// The route table; after a change regenerate docs/openapi.json (`node packages/server/dist/openapi.js`).
import type { Route } from '../route.js';
import { consoleAssetRoute, consolePageRoute, consoleRootRoute } from '../../console/page-routes.js';
import { idsBatchRoute, idsDecodeRoute, idsNextRoute } from './ids.js';
import { layoutsExplainRoute } from './layouts.js';
import { leafDecodeRoute, leafGetRoute } from './leaf.js';
import { healthzRoute, layoutRoute, metricsRoute, openapiRoute, readyzRoute } from '../../ops/routes.js';
import { publicDecodeRoute, publicNextRoute } from '../../public-ids/routes.js';
import { clusterRoute, eventsRoute, statusRoute } from '../../console/routes.js';
import { idsRangeRoute } from './range.js';
import { uuidsBatchRoute, uuidsDecodeRoute, uuidsNextRoute } from './uuids.js';
import {
  leafSegmentRoute,
  sequenceBatchRoute,
  sequenceNextRoute,
  sequenceStatusRoute,
} from '../../sequences/routes.js';

/** Every route, in the order of the OpenAPI document. A route's index is its metrics ID. */
export const ROUTES: readonly Route[] = Object.freeze([
  idsNextRoute,
  idsBatchRoute,
  idsRangeRoute,
  idsDecodeRoute,
  uuidsNextRoute,
  uuidsBatchRoute,
  uuidsDecodeRoute,
  layoutRoute,
  layoutsExplainRoute,
  publicNextRoute,
  publicDecodeRoute,
  leafGetRoute,
  leafDecodeRoute,
  sequenceNextRoute,
  sequenceBatchRoute,
  sequenceStatusRoute,
  leafSegmentRoute,
  statusRoute,
  clusterRoute,
  eventsRoute,
  healthzRoute,
  readyzRoute,
  metricsRoute,
  openapiRoute,
  consoleRootRoute,
  consolePageRoute,
  consoleAssetRoute,
]);

/** The metrics ID of requests no route matched (and of requests Node could not parse). */
export const UNMATCHED_ROUTE: number = ROUTES.length;

/** The `route` label of each metrics ID: the routes' names, then `unmatched`. */
export const ROUTE_NAMES: readonly string[] = Object.freeze([...ROUTES.map((r) => r.name), 'unmatched']);
