# SPDX-License-Identifier: Apache-2.0
"""Bringing a database to this server's schema: upstream Placement
16.0.0's plus this server's additions.

Two histories live side by side: upstream's in ``alembic_version``
(stamped by this server, so upstream's ``placement-manage db sync`` and
``db version`` work on a database it made) and ours (db/migrations) in
``osc_placement_version``, which upstream never reads. ``upgrade``
looks before it changes anything: an empty database gets both; upstream's
head gets ours (a takeover); this server's older own schema is first
renamed to upstream's (db/legacy_schema.py); anything else is refused
with ``UnknownDatabase``, unchanged.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import sqlalchemy as sa

from osc_placement.server.db import legacy_schema
from osc_placement.server.db import tables

_HERE = os.path.dirname(os.path.abspath(__file__))
VERSION_TABLE = 'osc_placement_version'
# Upstream Placement 16.0.0's alembic head, and the revisions before it.
UPSTREAM_HEAD = 'a082b8bb98d0'
OLDER_UPSTREAM = ('b4ed3a175331', '611cd6dffd7b', 'b5c396305c25',
                  '422ece571366')


class UnknownDatabase(Exception):
    """The database is not one this server can take over as it is."""


class NotCurrent(Exception):
    """The database lacks this server's current additions: it serves
    only after ``db sync``."""


def _config(connection):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', os.path.join(_HERE, 'migrations'))
    cfg.attributes['connection'] = connection
    return cfg


def _upstream_revision(conn):
    """upstream's recorded revision, or None without a version table."""
    if not sa.inspect(conn).has_table(tables.upstream_version.name):
        return None
    return conn.execute(
        sa.select(tables.upstream_version.c.version_num)).scalar()


def _older_upstream_message(revision):
    return ('This database is at upstream Placement revision %s, older than '
            'the 16.0.0 schema (%s) this server takes over. Bring it to '
            '16.0.0 with upstream Placement 16.0.0\'s "placement-manage db '
            'sync" first, then run this command again.'
            % (revision, UPSTREAM_HEAD))


def _check_known(conn):
    """Raise UnknownDatabase unless the database is empty, upstream's
    16.0.0 head (with or without our additions) or our legacy schema."""
    revision = _upstream_revision(conn)
    if revision in (UPSTREAM_HEAD,) or legacy_schema.is_legacy(revision):
        return
    if revision in OLDER_UPSTREAM:
        raise UnknownDatabase(_older_upstream_message(revision))
    if revision is not None:
        raise UnknownDatabase(
            'This database is at revision %s, which is neither upstream '
            'Placement 16.0.0\'s schema (%s) nor one of this server\'s; '
            'refusing to change it.' % (revision, UPSTREAM_HEAD))
    present = sorted(sa.inspect(conn).get_table_names())
    if present:
        raise UnknownDatabase(
            'This database holds tables (%s) but no Placement schema '
            'version; refusing to change it.' % ', '.join(present))


def _create_upstream_schema(conn):
    tables.metadata.create_all(
        conn, tables=list(tables.UPSTREAM_TABLES) + [tables.upstream_version])
    _stamp_upstream(conn, UPSTREAM_HEAD)


def _stamp_upstream(conn, revision):
    conn.execute(tables.upstream_version.delete())
    conn.execute(tables.upstream_version.insert().values(
        version_num=revision))


def _convert_legacy(conn):
    try:
        legacy_schema.convert(conn)
    except legacy_schema.ConversionError as exc:
        raise UnknownDatabase(str(exc))
    _stamp_upstream(conn, UPSTREAM_HEAD)


def _migrating(engine):
    """A connection for migrations, REPEATABLE READ on MySQL: InnoDB's
    INSERT ... SELECT summing usage then locks the allocations it reads,
    so writes meanwhile wait, not go unsummed (db/migrations' 1001)."""
    if engine.dialect.name == 'mysql':
        return engine.execution_options(isolation_level='REPEATABLE READ')
    return engine


def upgrade(engine):
    """Bring the database to this server's schema (see the module's
    docstring). Raises UnknownDatabase for one it must not touch."""
    with _migrating(engine).begin() as conn:
        _check_known(conn)
        revision = _upstream_revision(conn)
        if revision is None:
            _create_upstream_schema(conn)
        elif legacy_schema.is_legacy(revision):
            _convert_legacy(conn)
        command.upgrade(_config(conn), 'head')


def hand_back(engine):
    """Remove everything this server added (its tables, triggers and
    version table), leaving upstream's schema and rows as upstream
    16.0.0 would have them. ``upgrade`` takes the database over again."""
    with _migrating(engine).begin() as conn:
        command.downgrade(_config(conn), 'base')
        sa.Table(VERSION_TABLE, sa.MetaData()).drop(conn, checkfirst=True)


def stamp(engine, revision):
    """Record ``revision`` as upstream's schema revision, as upstream's
    ``db stamp`` does (upstream's own revisions, or ``head``)."""
    if revision == 'head':
        revision = UPSTREAM_HEAD
    if revision not in OLDER_UPSTREAM + (UPSTREAM_HEAD,):
        raise UnknownDatabase(
            "Can't locate revision identified by '%s'" % revision)
    with engine.begin() as conn:
        tables.upstream_version.create(conn, checkfirst=True)
        _stamp_upstream(conn, revision)


def current_version(engine):
    """Upstream's schema revision (what upstream's ``db version``
    prints), or None for an empty database."""
    with engine.connect() as conn:
        return _upstream_revision(conn)


def our_version(engine):
    """This server's own migration revision, or None."""
    with engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn, opts={'version_table': VERSION_TABLE}
        ).get_current_revision()


def our_head():
    return alembic_script.ScriptDirectory.from_config(
        _config(None)).get_current_head()


def require_current(engine):
    """Raise NotCurrent unless this server's migrations are at head: a
    server must not answer from a database whose derived tables are
    missing or stale (one not taken over yet, or handed back)."""
    found = our_version(engine)
    if found != our_head():
        raise NotCurrent(
            'The database is not at this server\'s schema (its revision '
            'is %s, this server needs %s): run "placement-manage db sync" '
            'first.' % (found, our_head()))
