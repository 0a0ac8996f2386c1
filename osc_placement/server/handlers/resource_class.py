# SPDX-License-Identifier: Apache-2.0
"""/resource_classes and /resource_classes/{name} (1.2)."""

from osc_placement.server import errors
from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server.objects import resource_class as rc_obj
from osc_placement.server.schemas import misc as schemas


def _class_json(req, name):
    return {'name': name, 'links': [
        {'rel': 'self', 'href': req.link('/resource_classes/' + name)}]}


def _location(req, name):
    return [('Location', req.location('/resource_classes/' + name))]


def _changed(row):
    return row['updated_at'] or row['created_at'] or common.now()


def list_classes(req):
    req.authorize('placement:resource_classes:list')
    with req.db.read() as conn:
        rows = rc_obj.list_all(conn)
    body = {'resource_classes': [_class_json(req, r['name']) for r in rows]}
    latest = max((_changed(r) for r in rows), default=common.now())
    return http_api.cached(req, http_api.Response(200, body), latest)


def create_class(req):
    req.authorize('placement:resource_classes:create')
    name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(rc_obj.create, name)
    return http_api.Response(201, None, _location(req, name))


def show_class(req):
    req.authorize('placement:resource_classes:show')
    name = req.url_vars['name']
    with req.db.read() as conn:
        row = rc_obj.get(conn, name)
    if row is None:
        raise errors.NotFound('No such resource class %s.' % name)
    return http_api.cached(req, http_api.Response(200, _class_json(req, name)),
                           _changed(row))


def update_class(req):
    if req.version.supports('idempotent_resource_class'):
        return _create_or_verify(req)
    return _rename(req)


def _rename(req):
    # Only the rename takes a body, so its check is here, not in the route.
    http_api.check_json_body(req)
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    new_name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(rc_obj.rename, name, new_name)
    return http_api.Response(200, _class_json(req, new_name))


def _create_or_verify(req):
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    http_api.validate({'name': name}, schemas.RESOURCE_CLASS,
                      'JSON does not validate: %s')
    created = req.db.run_write(rc_obj.ensure, name)
    return http_api.Response(201 if created else 204, None,
                             _location(req, name))


def delete_class(req):
    req.authorize('placement:resource_classes:delete')
    req.db.run_write(rc_obj.delete, req.url_vars['name'])
    return http_api.Response(204)
