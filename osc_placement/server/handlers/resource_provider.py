# SPDX-License-Identifier: Apache-2.0
"""/resource_providers and /resource_providers/{uuid}."""

import uuid as uuidlib

from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import provider_list
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj
from osc_placement.server.objects import trait as trait_obj
from osc_placement.server import schemas
from osc_placement.server.schemas import request_groups
from osc_placement.server.schemas import resource_provider as schema


def list_providers(req):
    req.authorize('placement:resource_providers:list')
    req.query(schema.list_query(req.version))
    group = request_groups.parse_provider_filters(list(req.GET.items()),
                                                  req.version)
    with req.db.read() as conn:
        rows = provider_list.matching(conn, name=req.GET.get('name'),
                                      uuid=req.GET.get('uuid'),
                                      **_resolved_filters(conn, group))
    body = {'resource_providers': [common.provider_json(req, r)
                                   for r in rows]}
    latest = max((common.changed_at(r) for r in rows), default=None)
    return http_api.cached(req, http_api.Response(200, body),
                           latest or common.now())


def _resolved_filters(conn, group):
    """The parsed filters with class and trait names turned into ids (400
    for unknown names, upstream's texts)."""
    class_ids = resource_class.ids_for(conn, list(group.resources))
    trait_ids = trait_obj.ids_for(conn, sorted(group.trait_names()))
    request_groups.validate_provider_filter_names(group, class_ids,
                                                  trait_ids)
    return {'in_tree': group.in_tree,
            'resources': {class_ids[name]: amount
                          for name, amount in group.resources.items()},
            'required': [{trait_ids[n] for n in any_of}
                         for any_of in group.required_traits],
            'forbidden': {trait_ids[n] for n in group.forbidden_traits},
            'member_of': list(group.member_of),
            'forbidden_aggs': set(group.forbidden_aggs)}


def create_provider(req):
    req.authorize('placement:resource_providers:create')
    data = req.json_body(schemas.for_version(schema.CREATE, req.version))
    uuid = common.normalize_uuid(data['uuid']) if 'uuid' in data \
        else str(uuidlib.uuid4())
    parent = data.get('parent_provider_uuid')
    if parent is not None:
        parent = common.normalize_uuid(parent)
    row = req.db.run_write(rp_obj.create, uuid, data['name'], parent)
    location = [('Location', req.location('/resource_providers/' + uuid))]
    if not req.version.supports('create_returns_provider'):
        return http_api.Response(201, None, location)
    resp = http_api.Response(200, common.provider_json(req, row), location)
    return http_api.cached(req, resp, common.changed_at(row))


def show_provider(req):
    req.authorize('placement:resource_providers:show')
    with req.db.read() as conn:
        row = rp_obj.require(conn, req.url_vars['uuid'])
    resp = http_api.Response(200, common.provider_json(req, row))
    return http_api.cached(req, resp, common.changed_at(row))


def update_provider(req):
    req.authorize('placement:resource_providers:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        rp_obj.require(conn, uuid)
    data = req.json_body(schemas.for_version(schema.UPDATE, req.version))
    parent = data.get('parent_provider_uuid', rp_obj.KEEP_PARENT)
    if isinstance(parent, str):
        parent = common.normalize_uuid(parent)
    row, before = req.db.run_write(rp_obj.update, uuid, data['name'],
                                   req.version, parent)
    resp = http_api.Response(200, common.provider_json(req, row))
    return http_api.cached(req, resp, common.changed_at(before))


def delete_provider(req):
    req.authorize('placement:resource_providers:delete')
    req.db.run_write(rp_obj.delete, req.url_vars['uuid'])
    return http_api.Response(204)
