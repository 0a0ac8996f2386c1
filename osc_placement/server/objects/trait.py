# SPDX-License-Identifier: Apache-2.0
"""Traits and provider traits.

Standard trait ids are cached per process once seen: standard traits are
never deleted, so a cached id cannot go stale. Custom traits are always
looked up. Every write of a trait or of a provider's traits changes the
providers' structure (db/structure.py).
"""

import functools

import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import generation
from osc_placement.server.objects import resource_provider as rp_obj

_T = tables.traits
_RPT = tables.resource_provider_traits
_RP = tables.resource_providers
CUSTOM_PREFIX = 'CUSTOM_'
_standard_ids = {}
# The provider traits routes' 404.
PROVIDER_404 = ('No resource provider with uuid %(uuid)s found: Resource '
                'provider %(uuid)s not found')


def ids_for(conn, names):
    """{name: id} for the names that exist."""
    found = {n: _standard_ids[n] for n in names if n in _standard_ids}
    missing = [n for n in names if n not in found]
    if missing:
        rows = conn.execute(sa.select(_T.c.name, _T.c.id)
                            .where(lists.one_of(conn, _T.c.name, missing))
                            ).all()
        for name, trait_id in rows:
            found[name] = trait_id
            if not name.startswith(CUSTOM_PREFIX):
                _standard_ids[name] = trait_id
    return found


def get(conn, name):
    return conn.execute(sa.select(_T).where(_T.c.name == name)
                        ).mappings().first()


def list_names(conn, names=None, prefix=None, associated=None):
    query = sa.select(_T.c.name, _T.c.created_at, _T.c.updated_at)
    if names is not None:
        query = query.where(lists.one_of(conn, _T.c.name, names))
    if prefix is not None:
        query = query.where(_T.c.name.like(prefix + '%'))
    if associated is not None:
        linked = sa.select(_RPT.c.trait_id).distinct()
        query = query.where(_T.c.id.in_(linked) if associated
                            else _T.c.id.not_in(linked))
    # Id order: upstream lists its cache, filled from a plain table scan
    # (standard traits first, custom ones by creation). Filtered lists
    # have no order upstream; ours keep the same one.
    return conn.execute(query.order_by(_T.c.id)).mappings().all()


def no_such_trait(name):
    return errors.NotFound('No such trait(s): %s.' % name)


def ensure(conn, name):
    """PUT /traits/{name}: (whether it was created, its creation time).
    A concurrent insert of the name re-runs the request, which then
    finds it."""
    row = get(conn, name)
    if row is not None:
        return False, row['created_at']
    now = tables.utcnow()
    try:
        conn.execute(_T.insert().values(name=name, created_at=now))
    except sa.exc.IntegrityError:
        raise db_engine.Retry(db_engine.DUPLICATE_KEY)
    return True, now


def _in_use(conn, trait_id):
    return conn.execute(sa.select(_RPT.c.trait_id)
                        .where(_RPT.c.trait_id == trait_id).limit(1)
                        ).first() is not None


def delete(conn, name):
    """DELETE /traits/{name}: custom traits no provider has only."""
    row = get(conn, name)
    if row is None:
        raise no_such_trait(name)
    if not name.startswith(CUSTOM_PREFIX):
        raise errors.BadRequest('Cannot delete standard trait %s.' % name)
    if _in_use(conn, row['id']):
        raise errors.Conflict('The trait %s is in use by a resource '
                              'provider.' % name)
    conn.execute(_T.delete().where(_T.c.id == row['id']))


@functools.lru_cache(maxsize=None)
def _provider_traits_statement():
    return rp_obj.select_with_provider(
        (_T.c.name, _RPT.c.created_at),
        ((_RPT, _RPT.c.resource_provider_id == _RP.c.id),
         (_T, _T.c.id == _RPT.c.trait_id)),
        order_by=(_RPT.c.trait_id,))


def read_provider_traits(conn, uuid):
    """(provider generation, [(name, created_at)] of its traits, in trait
    id order as upstream's scan of the (provider, trait) index returns
    them), by one statement; 404 if there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _provider_traits_statement(), uuid, 'name', PROVIDER_404)
    return generation, [(row['name'], row['created_at']) for row in rows]


def _provider_trait_ids(conn, provider_id):
    return set(conn.execute(
        sa.select(_RPT.c.trait_id)
        .where(_RPT.c.resource_provider_id == provider_id)).scalars())


def _replace_provider_traits(conn, provider_id, current, wanted):
    """Turn the provider's trait ids ``current`` into ``wanted``."""
    removed, added = current - wanted, wanted - current
    if removed:
        conn.execute(_RPT.delete().where(
            _RPT.c.resource_provider_id == provider_id,
            lists.one_of(conn, _RPT.c.trait_id, removed)))
    if added:
        now = tables.utcnow()
        conn.execute(_RPT.insert(), [
            {'resource_provider_id': provider_id, 'trait_id': t,
             'created_at': now} for t in sorted(added)])


def _replace(conn, provider, wanted):
    """Bump (compare-and-swap first, so writers queue) and write, only if
    the set changes."""
    current = _provider_trait_ids(conn, provider['id'])
    if current == wanted:
        return
    generation.bump(conn, provider['id'], provider['generation'],
                    generation.already_changed)
    _replace_provider_traits(conn, provider['id'], current, wanted)


def set_for_provider(conn, uuid, names, given_generation):
    """PUT /resource_providers/{uuid}/traits: (new generation, the
    provider's traits as :func:`read_provider_traits` gives them)."""
    provider = rp_obj.require(conn, uuid, PROVIDER_404)
    generation.check(provider, given_generation, generation.already_changed)
    ids = ids_for(conn, names)
    unknown = [n for n in names if n not in ids]
    if unknown:
        raise errors.BadRequest('No such trait %s' % ', '.join(unknown))
    _replace(conn, provider, set(ids.values()))
    # In the write's transaction: the generation it left.
    return read_provider_traits(conn, uuid)


def delete_for_provider(conn, uuid):
    """DELETE /resource_providers/{uuid}/traits."""
    provider = rp_obj.require(conn, uuid, PROVIDER_404)
    _replace(conn, provider, set())
