# SPDX-License-Identifier: Apache-2.0
"""Which usage totals changed since a worker last read them (PostgreSQL).

A worker keeping the cloud's structure (candidates/kept.py) still needs
each request's usage. ``usage_totals.changed``, set by the triggers to
the last changing transaction's id (``pg_current_xact_id()``) and
indexed, lets it read only the totals changed since; MySQL and SQLite
leave it 0 and read every total. Each step can run again, as 1001's.

Revision ID: 1002_usage_changes
Revises: 1001_derived_data
Create Date: 2026-12-03 06:00:00
"""

import importlib
import uuid

from alembic import op
import sqlalchemy as sa


revision = '1002_usage_changes'
down_revision = '1001_derived_data'
branch_labels = None
depends_on = None

COLUMN = 'changed'
INDEX = 'usage_totals_changed_idx'

# The transaction writing a total, as a bigint (xid8 has no cast to it).
_THIS_TRANSACTION = 'pg_current_xact_id()::text::bigint'


def _upsert(source, amount, having=''):
    """The body of a PostgreSQL usage trigger: add ``amount`` per provider
    and class of ``source`` to the totals, in key order (so that writers
    lock shared rows in one order), stamping each with this
    transaction."""
    return """
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used, changed)
        SELECT resource_provider_id, resource_class_id, %(amount)s,
               %(xact)s
        FROM %(source)s
        GROUP BY resource_provider_id, resource_class_id
        %(having)s
        ORDER BY resource_provider_id, resource_class_id
        ON CONFLICT (resource_provider_id, resource_class_id)
        DO UPDATE SET used = usage_totals.used + excluded.used,
                      changed = excluded.changed;
    """ % {'amount': amount, 'xact': _THIS_TRANSACTION, 'source': source,
           'having': having}


def _function(name, body):
    return """
    CREATE OR REPLACE FUNCTION %s() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        %s
        RETURN NULL;
    END $$
    """ % (name, body)


_BOTH_SIDES = """(SELECT resource_provider_id, resource_class_id, used
          FROM added
          UNION ALL
          SELECT resource_provider_id, resource_class_id, -used
          FROM removed) AS changes"""

# 1001's usage functions, with the transaction stamped on each total.
STAMPING_FUNCTIONS = [
    _function('osc_placement_usage_on_update',
              _upsert(_BOTH_SIDES, 'sum(used)', 'HAVING sum(used) <> 0')),
    _function('osc_placement_usage_on_insert', _upsert('added', 'sum(used)')),
    _function('osc_placement_usage_on_delete',
              _upsert('removed', '-sum(used)')),
]


def _restore_1001_functions(conn):
    derived = importlib.import_module(
        'osc_placement.server.db.migrations.versions.1001_derived_data')
    for statement in derived.TRIGGERS['postgresql']:
        if statement.lstrip().startswith(
                'CREATE OR REPLACE FUNCTION osc_placement_usage_on_'):
            conn.exec_driver_sql(statement)


def _has_column(conn):
    return COLUMN in {c['name'] for c in
                      sa.inspect(conn).get_columns('usage_totals')}


def _has_index(conn):
    return INDEX in {i['name'] for i in
                     sa.inspect(conn).get_indexes('usage_totals')}


def _new_stamp(conn):
    """Workers drop the structure they keep (and its usage horizon): what
    they read since depends on the triggers this changes."""
    conn.execute(sa.text('UPDATE provider_structure SET version = :stamp '
                         'WHERE id = 1'), {'stamp': uuid.uuid4().hex})


def upgrade():
    conn = op.get_bind()
    _new_stamp(conn)
    if not _has_column(conn):
        op.add_column('usage_totals', sa.Column(
            COLUMN, sa.BigInteger, nullable=False, server_default='0'))
    if conn.dialect.name != 'postgresql':
        return
    if not _has_index(conn):
        op.create_index(INDEX, 'usage_totals', [COLUMN])
    for statement in STAMPING_FUNCTIONS:
        conn.exec_driver_sql(statement)


def downgrade():
    """1001's functions, and no index or column. On MySQL and SQLite the
    column (always 0 there) stays: 1001 writes and reads around it, and
    its own downgrade (``placement-server db hand-back``) drops the
    table, while dropping a column makes SQLite check every trigger,
    which fails when a hand-back that stopped half way has already
    dropped the tables they name. On PostgreSQL it goes: a worker still
    reading changes by it would otherwise miss every change 1001's
    functions make, where without it its reads fail."""
    conn = op.get_bind()
    if sa.inspect(conn).has_table('provider_structure'):
        _new_stamp(conn)
    if conn.dialect.name != 'postgresql':
        return
    _restore_1001_functions(conn)
    if _has_index(conn):
        op.drop_index(INDEX, table_name='usage_totals')
    if _has_column(conn):
        op.drop_column('usage_totals', COLUMN)
