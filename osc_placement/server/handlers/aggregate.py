# SPDX-License-Identifier: Apache-2.0
"""/resource_providers/{uuid}/aggregates (1.1)."""

from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import aggregate as agg_obj
from osc_placement.server.objects import resource_provider as rp_obj
from osc_placement.server.schemas import misc as schemas


def _body(req, aggregates, provider_generation):
    body = {'aggregates': aggregates}
    if req.version.supports('aggregate_generation'):
        body['resource_provider_generation'] = provider_generation
    return http_api.cached(req, http_api.Response(200, body), common.now())


def get_aggregates(req):
    req.authorize('placement:resource_providers:aggregates:list')
    with req.db.read() as conn:
        generation, aggregates = agg_obj.read_provider_aggregates(
            conn, req.url_vars['uuid'])
    return _body(req, aggregates, generation)


def set_aggregates(req):
    req.authorize('placement:resource_providers:aggregates:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        rp_obj.require(conn, uuid)
    with_generation = req.version.supports('aggregate_generation')
    data = req.json_body(schemas.AGGREGATES_119 if with_generation
                         else schemas.AGGREGATES_11)
    aggregates = data['aggregates'] if with_generation else data
    given = data['resource_provider_generation'] if with_generation else None
    new_generation = req.db.run_write(agg_obj.set_for_provider, uuid,
                                      aggregates, given)
    return _body(req, aggregates, new_generation)
