"""/resource_providers and /resource_providers/{uuid}."""

import uuid as uuidlib

from osc_placement.server import errors
from osc_placement.server import schemas
from osc_placement.server import wsgi
from osc_placement.server.db import tables
from osc_placement.server.handlers import common
from osc_placement.server.handlers import provider_query
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj
from osc_placement.server.objects import trait as trait_obj
from osc_placement.server.schemas import resource_provider as schema


@wsgi.accept_json
def list_providers(req):
    req.authorize('placement:resource_providers:list')
    params = req.query(schemas.for_version(schema.LIST_QUERY, req.version))
    with req.db.read() as conn:
        filters = _list_filters(req, conn, params)
        rows = [] if filters is None else rp_obj.list_providers(
            conn, **filters)
    body = {'resource_providers': [common.provider_json(req, r)
                                   for r in rows]}
    latest = max((common.changed_at(r) for r in rows), default=None)
    return wsgi.cached(req, wsgi.Response(200, body),
                       latest or tables.utcnow())


def _list_filters(req, conn, params):
    """Keyword filters for rp_obj.list_providers; None = nothing matches."""
    filters = {'name': params.get('name'), 'uuid': params.get('uuid'),
               'in_tree': params.get('in_tree')}
    if 'resources' in params:
        filters['resources'] = _class_ids(conn, provider_query.parse_resources(
            params['resources']))
    if 'required' in params:
        required, forbidden = provider_query.parse_required(
            req.GET.getall('required'), req.version)
        filters['required'], filters['forbidden'] = _trait_ids(
            conn, required, forbidden)
    if 'member_of' in params:
        filters['member_of'], filters['forbidden_aggs'] = (
            provider_query.parse_member_of(req.GET.getall('member_of'),
                                           req.version))
    return filters


def _class_ids(conn, resources):
    ids = resource_class.require_ids(
        conn, list(resources),
        'Invalid resource class in resources parameter: No such resource '
        'class %s.')
    return {ids[name]: amount for name, amount in resources.items()}


def _trait_ids(conn, required, forbidden):
    names = set(forbidden).union(*required) if required else set(forbidden)
    ids = trait_obj.ids_for(conn, sorted(names))
    unknown = sorted(names - set(ids))
    if unknown:
        raise errors.BadRequest(
            'Invalid trait(s) in "required" parameter: No such trait(s): '
            '%s.' % ', '.join(unknown))
    return ([{ids[n] for n in any_of} for any_of in required],
            {ids[n] for n in forbidden})


@wsgi.require_json
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
    if req.version < (1, 20):
        return wsgi.Response(201, None, location)
    resp = wsgi.Response(200, common.provider_json(req, row), location)
    return wsgi.cached(req, resp, common.changed_at(row))


@wsgi.accept_json
def show_provider(req):
    req.authorize('placement:resource_providers:show')
    with req.db.read() as conn:
        row = common.provider_or_404(conn, req.url_vars['uuid'])
    return wsgi.cached(req, wsgi.Response(200, common.provider_json(req, row)),
                       common.changed_at(row))


@wsgi.require_json
def update_provider(req):
    req.authorize('placement:resource_providers:update')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        common.provider_or_404(conn, uuid)
    data = req.json_body(schemas.for_version(schema.UPDATE, req.version))
    row, before = req.db.run_write(_update, uuid, data, req.version)
    resp = wsgi.Response(200, common.provider_json(req, row))
    return wsgi.cached(req, resp, before)


def _update(conn, uuid, data, version):
    provider = common.provider_or_404(conn, uuid)
    kwargs = {}
    if 'parent_provider_uuid' in data:
        parent = data['parent_provider_uuid']
        kwargs['parent_uuid'] = (common.normalize_uuid(parent)
                                 if parent is not None else None)
    row = rp_obj.update(conn, provider, data['name'], version, **kwargs)
    return row, common.changed_at(provider)


def delete_provider(req):
    req.authorize('placement:resource_providers:delete')
    req.db.run_write(rp_obj.delete, req.url_vars['uuid'])
    return wsgi.Response(204)
