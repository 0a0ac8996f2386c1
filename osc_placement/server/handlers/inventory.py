# SPDX-License-Identifier: Apache-2.0
"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from osc_placement.server import errors
from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import generation
from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj
from osc_placement.server.schemas import inventory as schema


def _location(req, uuid, name):
    return req.location('/resource_providers/%s/inventories/%s'
                        % (uuid, name))


def _one_body(record, provider_generation):
    body = dict(record)
    body['resource_provider_generation'] = provider_generation
    return body


def list_inventories(req):
    req.authorize('placement:resource_providers:inventories:list')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        generation, records, latest = inv_obj.get_all(
            conn, uuid, 'No resource provider with uuid %(uuid)s found : '
            'Resource provider %(uuid)s not found')
    body = {'resource_provider_generation': generation,
            'inventories': records}
    return http_api.cached(req, http_api.Response(200, body), latest)


def show_inventory(req):
    req.authorize('placement:resource_providers:inventories:show')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    with req.db.read() as conn:
        ids = resource_class.ids_for(conn, [name])
        generation, row = inv_obj.read_one(conn, uuid, ids.get(name))
    if row is None:
        raise errors.NotFound('No inventory of class %s for %s'
                              % (name, uuid))
    record = {f: row[f] for f in inv_obj.FIELDS}
    resp = http_api.Response(200, _one_body(record, generation))
    return http_api.cached(req, resp, common.changed_at(row))


def create_inventory(req):
    req.authorize('placement:resource_providers:inventories:create')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        rp_obj.require(conn, uuid)
    data = req.json_body(schema.CREATE)
    name = data['resource_class']
    record = inv_obj.with_defaults(data)
    inv_obj.require_capacity({name: record}, uuid, req.version, 'create')
    new_generation = req.db.run_write(inv_obj.create, uuid, name, record)
    resp = http_api.Response(201, _one_body(record, new_generation),
                             [('Location', _location(req, uuid, name))])
    return http_api.cached(req, resp, common.now())


def set_inventories(req):
    req.authorize('placement:resource_providers:inventories:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        provider = rp_obj.require(conn, uuid)
    data = req.json_body(schema.SET_ALL)
    http_api.validate(data, schema.SET_ALL_GUARD,
                      'JSON does not validate: %s')
    generation.check(provider, data['resource_provider_generation'])
    records = {name: inv_obj.with_defaults(rec)
               for name, rec in data['inventories'].items()}
    new_generation = req.db.run_write(
        inv_obj.set_all, uuid, data['resource_provider_generation'],
        records, req.version)
    body = {'resource_provider_generation': new_generation,
            'inventories': records}
    return http_api.cached(req, http_api.Response(200, body),
                           common.now() if records else None)


def delete_inventories(req):
    req.authorize('placement:resource_providers:inventories:delete')
    req.db.run_write(inv_obj.delete_all, req.url_vars['uuid'])
    return http_api.Response(204)


def update_inventory(req):
    req.authorize('placement:resource_providers:inventories:update')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    with req.db.read() as conn:
        provider = rp_obj.require(conn, uuid)
    data = req.json_body(schema.UPDATE_ONE)
    generation.check(provider, data['resource_provider_generation'])
    record = inv_obj.with_defaults(data)
    new_generation = req.db.run_write(
        inv_obj.update, uuid, name, data['resource_provider_generation'],
        record, req.version)
    resp = http_api.Response(200, _one_body(record, new_generation))
    return http_api.cached(req, resp, common.now())


def delete_inventory(req):
    req.authorize('placement:resource_providers:inventories:delete')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    req.db.run_write(inv_obj.delete, uuid, name)
    return http_api.Response(204)
