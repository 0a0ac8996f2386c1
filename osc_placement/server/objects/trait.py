"""Traits and provider traits.

Standard trait ids are cached per process once seen: standard traits are
never deleted, so a cached id cannot go stale. Custom traits are always
looked up.
"""

import sqlalchemy as sa

from osc_placement.server.db import lists
from osc_placement.server.db import tables

_T = tables.traits
_RPT = tables.resource_provider_traits
CUSTOM_PREFIX = 'CUSTOM_'
_standard_ids = {}


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


def create(conn, name):
    conn.execute(_T.insert().values(name=name, created_at=tables.utcnow()))


def in_use(conn, trait_id):
    return conn.execute(sa.select(_RPT.c.trait_id)
                        .where(_RPT.c.trait_id == trait_id).limit(1)
                        ).first() is not None


def delete(conn, trait_id):
    conn.execute(_T.delete().where(_T.c.id == trait_id))


def provider_traits(conn, provider_id):
    """[(name, created_at)] of a provider's traits, in trait id order as
    upstream's scan of the (provider, trait) index returns them."""
    return conn.execute(
        sa.select(_T.c.name, _RPT.c.created_at)
        .join(_RPT, _RPT.c.trait_id == _T.c.id)
        .where(_RPT.c.resource_provider_id == provider_id)
        .order_by(_RPT.c.trait_id)).all()


def provider_trait_ids(conn, provider_id):
    return set(conn.execute(
        sa.select(_RPT.c.trait_id)
        .where(_RPT.c.resource_provider_id == provider_id)).scalars())


def replace_provider_traits(conn, provider_id, current, wanted):
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
