# SPDX-License-Identifier: Apache-2.0
"""/resource_providers/{uuid}/usages and /usages (1.9)."""

from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import usage as usage_obj
from osc_placement.server.schemas import misc as schemas


def provider_usages(req):
    req.authorize('placement:resource_providers:usages')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        generation, usages = usage_obj.provider_usages(
            conn, uuid, 'No resource provider with uuid %(uuid)s found: '
            'Resource provider %(uuid)s not found')
    body = {'resource_provider_generation': generation, 'usages': usages}
    return http_api.cached(req, http_api.Response(200, body), common.now())


def project_usages(req):
    req.authorize('placement:usages',
                  {'project_id': req.GET.get('project_id')})
    by_type = req.version.supports('consumer_types')
    params = req.query(schemas.USAGES_138 if by_type else schemas.USAGES_19)
    with req.db.read() as conn:
        if by_type:
            usages = usage_obj.project_usages_by_type(
                conn, params['project_id'], params.get('user_id'),
                params.get('consumer_type'))
        else:
            usages = usage_obj.project_usages(
                conn, params['project_id'], params.get('user_id'))
    return http_api.cached(req, http_api.Response(200, {'usages': usages}),
                           common.now())
