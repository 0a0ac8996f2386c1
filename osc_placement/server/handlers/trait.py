"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6)."""

import re

import sqlalchemy as sa

from osc_placement.server import errors
from osc_placement.server import http_api
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables
from osc_placement.server.handlers import common
from osc_placement.server.objects import generation
from osc_placement.server.objects import trait as trait_obj
from osc_placement.server.schemas import misc as schemas

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_GENERATION_CHANGED = ("Resource provider's generation already changed. "
                       "Please update the generation and try again.")


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
                 default=tables.utcnow())
    body = {'traits': [r['name'] for r in rows]}
    return http_api.cached(req, http_api.Response(200, body), latest)


def _no_such_trait(name):
    return errors.NotFound('No such trait(s): %s.' % name)


def show_trait(req):
    req.authorize('placement:traits:show')
    name = req.url_vars['name']
    with req.db.read() as conn:
        row = trait_obj.get(conn, name)
    if row is None:
        raise _no_such_trait(name)
    return http_api.cached(req, http_api.Response(204), row['created_at'])


def put_trait(req):
    req.authorize('placement:traits:update')
    name = req.url_vars['name']
    if not _CUSTOM.match(name) or len(name) > 255:
        raise errors.BadRequest(
            'The trait is invalid. A valid trait must be no longer than 255 '
            'characters, start with the prefix "CUSTOM_" and use following '
            'characters: "A"-"Z", "0"-"9" and "_"')
    created, created_at = req.db.run_write(_ensure_trait, name)
    resp = http_api.Response(201 if created else 204, None, [
        ('Location', req.location('/traits/' + name))])
    return http_api.cached(req, resp, created_at)


def _ensure_trait(conn, name):
    row = trait_obj.get(conn, name)
    if row is not None:
        return False, row['created_at']
    try:
        trait_obj.create(conn, name)
    except sa.exc.IntegrityError:
        raise db_engine.Retry()
    return True, tables.utcnow()


def delete_trait(req):
    req.authorize('placement:traits:delete')
    req.db.run_write(_delete_trait, req.url_vars['name'])
    return http_api.Response(204)


def _delete_trait(conn, name):
    row = trait_obj.get(conn, name)
    if row is None:
        raise _no_such_trait(name)
    if not name.startswith(trait_obj.CUSTOM_PREFIX):
        raise errors.BadRequest('Cannot delete standard trait %s.' % name)
    if trait_obj.in_use(conn, row['id']):
        raise errors.Conflict('The trait %s is in use by a resource '
                              'provider.' % name)
    trait_obj.delete(conn, row['id'])


_PROVIDER_404 = ('No resource provider with uuid %(uuid)s found: Resource '
                 'provider %(uuid)s not found')


def _provider_traits_response(req, traits, provider_generation):
    body = {'traits': [name for name, _ in traits],
            'resource_provider_generation': provider_generation}
    latest = max((when for _, when in traits if when is not None),
                 default=tables.utcnow())
    return http_api.cached(req, http_api.Response(200, body), latest)


def list_provider_traits(req):
    req.authorize('placement:resource_providers:traits:list')
    uuid = req.url_vars['uuid']
    with req.db.read() as conn:
        provider = common.provider_or_404(conn, uuid, _PROVIDER_404)
        traits = trait_obj.provider_traits(conn, provider['id'])
    return _provider_traits_response(req, traits, provider['generation'])


def _conflict():
    return errors.Conflict(_GENERATION_CHANGED, code=errors.CONCURRENT_UPDATE)


def set_provider_traits(req):
    req.authorize('placement:resource_providers:traits:update')
    data = req.json_body(schemas.PROVIDER_TRAITS)
    uuid = req.url_vars['uuid']
    new_generation, traits = req.db.run_write(
        _set_traits, uuid, data['traits'],
        data['resource_provider_generation'])
    return _provider_traits_response(req, traits, new_generation)


def _set_traits(conn, uuid, names, given_generation):
    provider = common.provider_or_404(conn, uuid, _PROVIDER_404)
    generation.check(provider, given_generation, _conflict)
    ids = trait_obj.ids_for(conn, names)
    unknown = [n for n in names if n not in ids]
    if unknown:
        raise errors.BadRequest('No such trait %s' % ', '.join(unknown))
    new_generation = _replace(conn, provider, set(ids.values()))
    return new_generation, trait_obj.provider_traits(conn, provider['id'])


def _replace(conn, provider, wanted):
    """Bump (compare-and-swap first, so writers queue) and write, only if
    the set changes; return the provider generation."""
    current = trait_obj.provider_trait_ids(conn, provider['id'])
    if current == wanted:
        return provider['generation']
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'], _conflict)
    trait_obj.replace_provider_traits(conn, provider['id'], current, wanted)
    return new_generation


def delete_provider_traits(req):
    req.authorize('placement:resource_providers:traits:delete')
    req.db.run_write(_delete_traits, req.url_vars['uuid'])
    return http_api.Response(204)


def _delete_traits(conn, uuid):
    provider = common.provider_or_404(conn, uuid, _PROVIDER_404)
    _replace(conn, provider, set())
