// `GET /v1/layouts/explain`: builds any layout and describes it, or answers the core's refusal as a 400.
import { serverError } from '../../errors.js';
import { chooseLayout } from '../../layout-choice.js';
import { BAD, COMMON, jsonOk, param } from '../openapi-parts.js';
import { JSON_TYPE, sendText } from '../respond.js';
import { READ, type Route } from '../route.js';

const PARAMS = new Set(['fields', 'preset', 'epoch', 'unit']);
const STRING = { type: 'string' };

/** The description of the layout a query names, as JSON; a coded 400 (the core's layout errors, `FLURRY_E_QUERY`). */
function explainLayout(query: string): string {
  const params = new URLSearchParams(query);
  for (const [name] of params) {
    if (!PARAMS.has(name))
      throw serverError(
        'QUERY',
        `unknown query parameter ${name.slice(0, 40)}; use fields (e.g. timestamp:41,worker:10,sequence:12), epoch, unit, or preset`,
        { parameter: name.slice(0, 40) },
      );
    if (params.getAll(name).length > 1)
      throw serverError('QUERY', `the query parameter ${name} is given more than once; give it once`, {
        parameter: name,
      });
  }
  const fields = params.get('fields');
  const preset = params.get('preset');
  if ((fields === null) === (preset === null))
    throw serverError(
      'QUERY',
      'give exactly one of fields (e.g. fields=timestamp:41,datacenter:5,worker:5,sequence:12, with optional epoch and unit) or preset (e.g. preset=twitter)',
    );
  if (preset !== null && (params.has('epoch') || params.has('unit')))
    throw serverError('QUERY', 'a preset has its own epoch and unit; give fields to choose them');
  const given = (name: string): string | undefined => params.get(name) || undefined;
  const choice =
    preset !== null ? { layout: preset } : { fields: fields ?? '', epoch: given('epoch'), unit: given('unit') };
  return JSON.stringify(chooseLayout(choice).describe());
}

export const layoutsExplainRoute: Route = {
  name: 'layouts_explain',
  path: '/v1/layouts/explain',
  methods: READ,
  create: () => (res, input) => sendText(res, 200, JSON_TYPE, explainLayout(input.query)),
  openapi: {
    operationId: 'explainLayout',
    summary:
      "Build a layout (any layout, not this service's) and describe it: capacity and end of life, or the library's refusal.",
    parameters: [
      param(
        'query',
        'fields',
        undefined,
        STRING,
        'Field list, most significant first, e.g. timestamp:41,datacenter:5,worker:5,sequence:12.',
      ),
      param('query', 'epoch', undefined, STRING, 'ISO 8601 date or Unix ms (with fields).'),
      param('query', 'unit', undefined, STRING, '1ms, 10ms or 1s (with fields).'),
      param('query', 'preset', undefined, STRING, 'A preset instead of fields, e.g. twitter.'),
    ],
    responses: {
      ...jsonOk("The layout's description (as `flurry layout --json`).", {
        type: 'object',
        additionalProperties: true,
      }),
      ...BAD,
      ...COMMON,
    },
  },
};
