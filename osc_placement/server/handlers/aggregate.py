"""/resource_providers/{uuid}/aggregates (1.1)."""

from osc_placement.server import errors
from osc_placement.server import http_api
from osc_placement.server.db import tables
from osc_placement.server.handlers import common
from osc_placement.server.objects import aggregate as agg_obj
from osc_placement.server.objects import generation
from osc_placement.server.schemas import misc as schemas

_GENERATION_CHANGED = ("Resource provider's generation already changed. "
                       "Please update the generation and try again.")


def _body(req, aggregates, provider_generation):
    body = {'aggregates': aggregates}
    if req.version.supports('aggregate_generation'):
        body['resource_provider_generation'] = provider_generation
    return http_api.cached(req, http_api.Response(200, body), tables.utcnow())


def get_aggregates(req):
    req.authorize('placement:resource_providers:aggregates:list')
    with req.db.read() as conn:
        provider = common.provider_or_404(conn, req.url_vars['uuid'])
        aggregates = agg_obj.provider_aggregates(conn, provider['id'])
    return _body(req, aggregates, provider['generation'])


def _conflict():
    return errors.Conflict(_GENERATION_CHANGED, code=errors.CONCURRENT_UPDATE)


def set_aggregates(req):
    req.authorize('placement:resource_providers:aggregates:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        common.provider_or_404(conn, uuid)
    with_generation = req.version.supports('aggregate_generation')
    data = req.json_body(schemas.AGGREGATES_119 if with_generation
                         else schemas.AGGREGATES_11)
    aggregates = data['aggregates'] if with_generation else data
    given = data['resource_provider_generation'] if with_generation else None
    new_generation = req.db.run_write(_set, uuid, aggregates, given)
    return _body(req, aggregates, new_generation)


def _set(conn, uuid, aggregates, given_generation):
    provider = common.provider_or_404(conn, uuid)
    new_generation = provider['generation']
    if given_generation is not None:
        # Compare-and-swap first: concurrent writers queue on the row.
        generation.check(provider, given_generation, _conflict)
        new_generation = generation.bump(conn, provider['id'],
                                         given_generation, _conflict)
    agg_obj.replace_provider_aggregates(conn, provider['id'], aggregates)
    return new_generation
