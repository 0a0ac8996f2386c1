"""/resource_classes and /resource_classes/{name} (1.2)."""

from osc_placement.server import errors
from osc_placement.server import wsgi
from osc_placement.server.handlers import common
from osc_placement.server.objects import resource_class as rc_obj
from osc_placement.server.schemas import misc as schemas

_SINCE = 'resource_classes'


def _class_json(req, name):
    return {'name': name, 'links': [
        {'rel': 'self', 'href': req.link('/resource_classes/' + name)}]}


def _location(req, name):
    return [('Location', req.location('/resource_classes/' + name))]


def _changed(row):
    return row['updated_at'] or row['created_at'] or common.now()


@wsgi.accept_json
@wsgi.since(_SINCE)
def list_classes(req):
    req.authorize('placement:resource_classes:list')
    with req.db.read() as conn:
        rows = rc_obj.list_all(conn)
    body = {'resource_classes': [_class_json(req, r['name']) for r in rows]}
    latest = max((_changed(r) for r in rows), default=common.now())
    return wsgi.cached(req, wsgi.Response(200, body), latest)


@wsgi.since(_SINCE)
@wsgi.require_json
def create_class(req):
    req.authorize('placement:resource_classes:create')
    name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(rc_obj.create, name)
    return wsgi.Response(201, None, _location(req, name))


@wsgi.accept_json
@wsgi.since(_SINCE)
def show_class(req):
    req.authorize('placement:resource_classes:show')
    name = req.url_vars['name']
    with req.db.read() as conn:
        row = rc_obj.get(conn, name)
    if row is None:
        raise errors.NotFound('No such resource class %s.' % name)
    return wsgi.cached(req, wsgi.Response(200, _class_json(req, name)),
                       _changed(row))


@wsgi.since(_SINCE)
def update_class(req):
    if req.version.supports('rc_put_create'):
        return _create_or_verify(req)
    return _rename(req)


@wsgi.require_json
def _rename(req):
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    new_name = req.json_body(schemas.RESOURCE_CLASS)['name']
    req.db.run_write(rc_obj.rename, name, new_name)
    return wsgi.Response(200, _class_json(req, new_name))


def _create_or_verify(req):
    req.authorize('placement:resource_classes:update')
    name = req.url_vars['name']
    wsgi.validate({'name': name}, schemas.RESOURCE_CLASS,
                  'JSON does not validate: %s')
    created = req.db.run_write(rc_obj.ensure, name)
    return wsgi.Response(201 if created else 204, None,
                         _location(req, name))


@wsgi.since(_SINCE)
def delete_class(req):
    req.authorize('placement:resource_classes:delete')
    req.db.run_write(rc_obj.delete, req.url_vars['name'])
    return wsgi.Response(204)
