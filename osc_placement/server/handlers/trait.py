# SPDX-License-Identifier: Apache-2.0
"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6)."""

import re

from osc_placement.server import errors
from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import trait as trait_obj
from osc_placement.server.schemas import misc as schemas

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


def _name_filter(value):
    """``in:A,B`` -> names; ``startswith:P`` -> prefix; other ops: none."""
    if ':' not in value:
        raise errors.BadRequest(
            'Badly formatted name parameter. Expected name query string '
            'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
            'Got: "%s"' % value)
    operator, _, operand = value.partition(':')
    if operator == 'in':
        return {'names': operand.split(',')}
    if operator == 'startswith':
        return {'prefix': operand}
    return {}


def _associated_filter(value):
    if value.lower() not in ('true', 'false'):
        raise errors.BadRequest('The query parameter "associated" only '
                                'accepts "true" or "false"')
    return {'associated': value.lower() == 'true'}


def list_traits(req):
    req.authorize('placement:traits:list')
    params = req.query(schemas.TRAITS_QUERY)
    filters = {}
    if 'name' in params:
        filters.update(_name_filter(params['name']))
    if 'associated' in params:
        filters.update(_associated_filter(params['associated']))
    with req.db.read() as conn:
        rows = trait_obj.list_names(conn, **filters)
    latest = max((r['updated_at'] or r['created_at'] for r in rows),
                 default=common.now())
    body = {'traits': [r['name'] for r in rows]}
    return http_api.cached(req, http_api.Response(200, body), latest)


def show_trait(req):
    req.authorize('placement:traits:show')
    name = req.url_vars['name']
    with req.db.read() as conn:
        row = trait_obj.get(conn, name)
    if row is None:
        raise trait_obj.no_such_trait(name)
    return http_api.cached(req, http_api.Response(204), row['created_at'])


def put_trait(req):
    req.authorize('placement:traits:update')
    name = req.url_vars['name']
    if not _CUSTOM.match(name) or len(name) > 255:
        raise errors.BadRequest(
            'The trait is invalid. A valid trait must be no longer than 255 '
            'characters, start with the prefix "CUSTOM_" and use following '
            'characters: "A"-"Z", "0"-"9" and "_"')
    created, created_at = req.db.run_write(trait_obj.ensure, name)
    resp = http_api.Response(201 if created else 204, None, [
        ('Location', req.location('/traits/' + name))])
    return http_api.cached(req, resp, created_at)


def delete_trait(req):
    req.authorize('placement:traits:delete')
    req.db.run_write(trait_obj.delete, req.url_vars['name'])
    return http_api.Response(204)


def _provider_traits_response(req, traits, provider_generation):
    body = {'traits': [name for name, _ in traits],
            'resource_provider_generation': provider_generation}
    latest = max((when for _, when in traits if when is not None),
                 default=common.now())
    return http_api.cached(req, http_api.Response(200, body), latest)


def list_provider_traits(req):
    req.authorize('placement:resource_providers:traits:list')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        generation, traits = trait_obj.read_provider_traits(conn, uuid)
    return _provider_traits_response(req, traits, generation)


def set_provider_traits(req):
    req.authorize('placement:resource_providers:traits:update')
    data = req.json_body(schemas.PROVIDER_TRAITS)
    uuid = req.url_vars['uuid']
    new_generation, traits = req.db.run_write(
        trait_obj.set_for_provider, uuid, data['traits'],
        data['resource_provider_generation'])
    return _provider_traits_response(req, traits, new_generation)


def delete_provider_traits(req):
    req.authorize('placement:resource_providers:traits:delete')
    req.db.run_write(trait_obj.delete_for_provider, req.url_vars['uuid'])
    return http_api.Response(204)
