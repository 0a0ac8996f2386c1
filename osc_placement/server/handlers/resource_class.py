"""/resource_classes and /resource_classes/{name} (1.2)."""

import sqlalchemy as sa

from osc_placement.server import errors
from osc_placement.server import http_api
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables
from osc_placement.server.objects import resource_class as rc_obj
from osc_placement.server.schemas import misc as schemas


def _class_json(req, name):
    return {'name': name, 'links': [
        {'rel': 'self', 'href': req.link('/resource_classes/' + name)}]}


def _location(req, name):
    return [('Location', req.location('/resource_classes/' + name))]


def _changed(row):
    return row['updated_at'] or row['created_at'] or tables.utcnow()


def list_classes(req):
    req.authorize('placement:resource_classes:list')
    with req.db.read() as conn:
        rows = rc_obj.list_all(conn)
    body = {'resource_classes': [_class_json(req, r['name']) for r in rows]}
    latest = max((_changed(r) for r in rows), default=tables.utcnow())
    return http_api.cached(req, http_api.Response(200, body), latest)


def create_class(req):
    req.authorize('placement:resource_classes:create')
    name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(_create, name)
    return http_api.Response(201, None, _location(req, name))


def _conflict(name):
    return errors.Conflict(
        'Conflicting resource class already exists: %s' % name)


def _create(conn, name):
    if rc_obj.get(conn, name) is not None:
        raise _conflict(name)
    try:
        rc_obj.create(conn, name)
    except sa.exc.IntegrityError:
        # Lost a race for the id or the name: the retry sorts out which.
        raise db_engine.Retry()


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
    if req.version.supports('rc_put_create'):
        return _create_or_verify(req)
    return _rename(req)


def _rename(req):
    # Only the rename takes a body, so its check is here, not in the route.
    http_api.check_json_body(req)
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    new_name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(_do_rename, name, new_name)
    return http_api.Response(200, _class_json(req, new_name))


def _do_rename(conn, name, new_name):
    row = rc_obj.get(conn, name)
    if row is None:
        raise errors.NotFound('No such resource class %s.' % name)
    if row['id'] < tables.CUSTOM_RC_MIN_ID:
        raise errors.BadRequest('Cannot update standard resource class %s'
                                % name)
    if new_name != name and rc_obj.get(conn, new_name) is not None:
        raise errors.Conflict('Resource class already exists: %s' % new_name)
    rc_obj.rename(conn, row['id'], new_name)


def _create_or_verify(req):
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    http_api.validate({'name': name}, schemas.RESOURCE_CLASS,
                      'JSON does not validate: %s')
    created = req.db.run_write(_ensure, name)
    return http_api.Response(201 if created else 204, None,
                             _location(req, name))


def _ensure(conn, name):
    if rc_obj.get(conn, name) is not None:
        return False
    _create(conn, name)
    return True


def delete_class(req):
    req.authorize('placement:resource_classes:delete')
    req.db.run_write(_delete, req.url_vars['name'])
    return http_api.Response(204)


def _delete(conn, name):
    row = rc_obj.get(conn, name)
    if row is None:
        raise errors.NotFound('No such resource class %s.' % name)
    if row['id'] < tables.CUSTOM_RC_MIN_ID:
        raise errors.BadRequest('Error in delete resource class: Cannot '
                                'delete standard resource class %s.' % name)
    if rc_obj.in_use(conn, row['id']):
        raise errors.Conflict('Error in delete resource class: Cannot delete '
                              'resource class %s. Class is in use in '
                              'inventory.' % name)
    rc_obj.delete(conn, row['id'])
