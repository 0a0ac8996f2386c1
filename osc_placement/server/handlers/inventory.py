"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from osc_placement.server import errors
from osc_placement.server import http_api
from osc_placement.server.db import tables
from osc_placement.server.handlers import common
from osc_placement.server.objects import generation
from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.objects import resource_class
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
        provider = common.provider_or_404(
            conn, uuid, 'No resource provider with uuid %(uuid)s found : '
            'Resource provider %(uuid)s not found')
        records, latest = inv_obj.get_all(conn, provider['id'])
    body = {'resource_provider_generation': provider['generation'],
            'inventories': records}
    return http_api.cached(req, http_api.Response(200, body), latest)


def show_inventory(req):
    req.authorize('placement:resource_providers:inventories:show')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    with req.db.read() as conn:
        provider = common.provider_or_404(conn, uuid)
        ids = resource_class.ids_for(conn, [name])
        row = (inv_obj.get_one(conn, provider['id'], ids[name])
               if name in ids else None)
    if row is None:
        raise errors.NotFound('No inventory of class %s for %s'
                              % (name, uuid))
    record = {f: row[f] for f in inv_obj.FIELDS}
    resp = http_api.Response(200, _one_body(record, provider['generation']))
    return http_api.cached(req, resp, common.changed_at(row))


def _capacity_or_400(records, uuid, version, action):
    problem = inv_obj.check_capacity(records, uuid, version)
    if problem:
        raise errors.BadRequest('Unable to %s inventory for resource '
                                'provider %s: %s' % (action, uuid, problem))


def create_inventory(req):
    req.authorize('placement:resource_providers:inventories:create')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        common.provider_or_404(conn, uuid)
    data = req.json_body(schema.CREATE)
    name = data['resource_class']
    record = inv_obj.with_defaults(data)
    _capacity_or_400({name: record}, uuid, req.version, 'create')
    new_generation = req.db.run_write(_create, uuid, name, record)
    resp = http_api.Response(201, _one_body(record, new_generation),
                             [('Location', _location(req, uuid, name))])
    return http_api.cached(req, resp, tables.utcnow())


def _create(conn, uuid, name, record):
    provider = common.provider_or_404(conn, uuid)
    ids = resource_class.require_ids(
        conn, [name], 'Unable to create inventory for resource provider '
        '%(uuid)s: No such resource class %(name)s.', {'uuid': uuid})
    return inv_obj.add(conn, provider, ids[name], record)


def set_inventories(req):
    req.authorize('placement:resource_providers:inventories:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        provider = common.provider_or_404(conn, uuid)
    data = req.json_body(schema.SET_ALL)
    generation.check(provider, data['resource_provider_generation'])
    records = {name: inv_obj.with_defaults(rec)
               for name, rec in data['inventories'].items()}
    new_generation = req.db.run_write(
        _set_all, uuid, data['resource_provider_generation'], records,
        req.version)
    body = {'resource_provider_generation': new_generation,
            'inventories': records}
    return http_api.cached(req, http_api.Response(200, body),
                           tables.utcnow() if records else None)


def _set_all(conn, uuid, given_generation, records, version):
    provider = common.provider_or_404(conn, uuid)
    generation.check(provider, given_generation)
    # Capacity before class names, as upstream checks its Inventory
    # objects before it looks their classes up.
    _capacity_or_400(records, uuid, version, 'update')
    ids = resource_class.require_ids(
        conn, list(records), 'Unknown resource class in inventory for '
        'resource provider %(uuid)s: No such resource class %(name)s.',
        {'uuid': uuid})
    return inv_obj.replace_all(
        conn, provider, {ids[n]: rec for n, rec in records.items()},
        inv_obj.in_use_conflict(conn, uuid))


def delete_inventories(req):
    req.authorize('placement:resource_providers:inventories:delete')
    req.db.run_write(_delete_all, req.url_vars['uuid'])
    return http_api.Response(204)


def _delete_all(conn, uuid):
    provider = common.provider_or_404(conn, uuid)
    inv_obj.replace_all(conn, provider, {},
                        inv_obj.in_use_conflict(conn, uuid, prefix=''))


def update_inventory(req):
    req.authorize('placement:resource_providers:inventories:update')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    with req.db.read() as conn:
        provider = common.provider_or_404(conn, uuid)
    data = req.json_body(schema.UPDATE_ONE)
    generation.check(provider, data['resource_provider_generation'])
    record = inv_obj.with_defaults(data)
    new_generation = req.db.run_write(
        _update_one, uuid, name, data['resource_provider_generation'],
        record, req.version)
    resp = http_api.Response(200, _one_body(record, new_generation))
    return http_api.cached(req, resp, tables.utcnow())


def _update_one(conn, uuid, name, given_generation, record, version):
    provider = common.provider_or_404(conn, uuid)
    generation.check(provider, given_generation)
    # Capacity first: upstream validates the record before it looks up
    # the class (404 if unknown) or the provider's inventory of it (400).
    _capacity_or_400({name: record}, uuid, version, 'update')
    ids = resource_class.require_ids(conn, [name], error=errors.NotFound)
    if inv_obj.get_one(conn, provider['id'], ids[name]) is None:
        raise errors.BadRequest(
            'No inventory record with resource class for resource provider '
            '%s: No inventory of class %s found.' % (uuid, name))
    return inv_obj.update_one(conn, provider, ids[name], record)


def delete_inventory(req):
    req.authorize('placement:resource_providers:inventories:delete')
    uuid, name = req.url_vars['uuid'], req.url_vars['resource_class']
    req.db.run_write(_delete_one, uuid, name)
    return http_api.Response(204)


def _delete_one(conn, uuid, name):
    provider = common.provider_or_404(conn, uuid)
    ids = resource_class.ids_for(conn, [name])
    if name not in ids or inv_obj.get_one(conn, provider['id'],
                                          ids[name]) is None:
        raise errors.NotFound(
            'No inventory of class %s found for delete: No inventory of '
            'class %s found for delete' % (name, name))
    if inv_obj.allocated_classes(conn, provider['id'], [ids[name]]):
        # Upstream uses the concurrent_update code here [quirk].
        raise errors.Conflict(
            'Unable to delete inventory of class %s: %s'
            % (name, inv_obj.in_use_message(conn, uuid, [ids[name]])),
            code=errors.CONCURRENT_UPDATE)
    inv_obj.delete_one(conn, provider, ids[name])
