# SPDX-License-Identifier: Apache-2.0
"""This server's additions to upstream's schema, kept by triggers.

``usage_totals`` and ``provider_structure`` (db/structure.py) derive from
upstream's tables; triggers keep them right whoever writes (this server,
upstream during a rolling upgrade, plain SQL). PostgreSQL's stamp
triggers are deferred to commit so the stamp row is locked last, after
the providers (no lock-order cycle). The triggers exist before the
totals are summed, so no write lands uncounted. Each step can run again,
as MySQL commits each DDL statement and a failed run leaves some done.

Revision ID: 1001_derived_data
Revises:
Create Date: 2026-12-02 12:10:00
"""

import re
import uuid

from alembic import op
import sqlalchemy as sa


revision = '1001_derived_data'
down_revision = None
branch_labels = None
depends_on = None

# What the candidate search reads besides usage: a change to any of these
# tables' rows means a new stamp. resource_providers is listed apart: its
# generation changes on every allocation write and is not structure.
STAMPED_TABLES = ('inventories', 'resource_provider_traits',
                  'resource_provider_aggregates', 'traits',
                  'resource_classes', 'placement_aggregates')
PROVIDER_STRUCTURE_COLUMNS = ('uuid', 'name', 'root_provider_id',
                              'parent_provider_id')

_POSTGRESQL = [
    """
    CREATE OR REPLACE FUNCTION osc_placement_new_stamp() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        -- Once per transaction: the first row's trigger sets a new stamp
        -- and a setting local to the transaction, which the others find.
        IF current_setting('osc_placement.stamped', true)
                IS DISTINCT FROM 'yes' THEN
            UPDATE provider_structure
            SET version = replace(gen_random_uuid()::text, '-', '')
            WHERE id = 1;
            PERFORM set_config('osc_placement.stamped', 'yes', true);
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION osc_placement_usage_on_update() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        -- In key order, so that writers lock shared rows in one order.
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, sum(used)
        FROM (SELECT resource_provider_id, resource_class_id, used
              FROM added
              UNION ALL
              SELECT resource_provider_id, resource_class_id, -used
              FROM removed) AS changes
        GROUP BY resource_provider_id, resource_class_id
        HAVING sum(used) <> 0
        ORDER BY resource_provider_id, resource_class_id
        ON CONFLICT (resource_provider_id, resource_class_id)
        DO UPDATE SET used = usage_totals.used + excluded.used;
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION osc_placement_usage_on_insert() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, sum(used)
        FROM added
        GROUP BY resource_provider_id, resource_class_id
        ORDER BY resource_provider_id, resource_class_id
        ON CONFLICT (resource_provider_id, resource_class_id)
        DO UPDATE SET used = usage_totals.used + excluded.used;
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION osc_placement_usage_on_delete() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, -sum(used)
        FROM removed
        GROUP BY resource_provider_id, resource_class_id
        ORDER BY resource_provider_id, resource_class_id
        ON CONFLICT (resource_provider_id, resource_class_id)
        DO UPDATE SET used = usage_totals.used + excluded.used;
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION osc_placement_usage_for_inventories()
    RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, 0
        FROM added
        ORDER BY resource_provider_id, resource_class_id
        ON CONFLICT (resource_provider_id, resource_class_id) DO NOTHING;
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION osc_placement_forget_providers() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM usage_totals
        WHERE resource_provider_id IN (SELECT id FROM removed);
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER osc_placement_usage_on_insert AFTER INSERT ON allocations
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION osc_placement_usage_on_insert()
    """,
    """
    CREATE TRIGGER osc_placement_usage_on_delete AFTER DELETE ON allocations
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION osc_placement_usage_on_delete()
    """,
    """
    CREATE TRIGGER osc_placement_usage_on_update AFTER UPDATE ON allocations
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION osc_placement_usage_on_update()
    """,
    """
    CREATE TRIGGER osc_placement_usage_for_inventories
    AFTER INSERT ON inventories
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION osc_placement_usage_for_inventories()
    """,
    """
    CREATE TRIGGER osc_placement_forget_providers
    AFTER DELETE ON resource_providers
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION osc_placement_forget_providers()
    """,
    """
    CREATE CONSTRAINT TRIGGER osc_placement_stamp
    AFTER INSERT OR DELETE ON resource_providers
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION osc_placement_new_stamp()
    """,
    """
    CREATE CONSTRAINT TRIGGER osc_placement_stamp_on_update
    AFTER UPDATE ON resource_providers
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (%s)
    EXECUTE FUNCTION osc_placement_new_stamp()
    """ % ' OR '.join('OLD.%s IS DISTINCT FROM NEW.%s' % (c, c)
                      for c in PROVIDER_STRUCTURE_COLUMNS),
] + [
    """
    CREATE CONSTRAINT TRIGGER osc_placement_stamp
    AFTER INSERT OR UPDATE OR DELETE ON %s
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION osc_placement_new_stamp()
    """ % table for table in STAMPED_TABLES
]

_MYSQL_NEW_STAMP = ("UPDATE provider_structure "
                    "SET version = REPLACE(UUID(), '-', '') WHERE id = 1")
_MYSQL_ADD_NEW = """
    INSERT INTO usage_totals (resource_provider_id, resource_class_id, used)
    VALUES (NEW.resource_provider_id, NEW.resource_class_id, NEW.used)
    ON DUPLICATE KEY UPDATE used = used + NEW.used"""
_MYSQL_TAKE_OLD = """
    UPDATE usage_totals SET used = used - OLD.used
    WHERE resource_provider_id = OLD.resource_provider_id
      AND resource_class_id = OLD.resource_class_id"""

_MYSQL = [
    "CREATE TRIGGER osc_placement_usage_on_insert AFTER INSERT ON "
    "allocations FOR EACH ROW" + _MYSQL_ADD_NEW,
    "CREATE TRIGGER osc_placement_usage_on_delete AFTER DELETE ON "
    "allocations FOR EACH ROW" + _MYSQL_TAKE_OLD,
    "CREATE TRIGGER osc_placement_usage_on_update AFTER UPDATE ON "
    "allocations FOR EACH ROW BEGIN %s; %s; END"
    % (_MYSQL_TAKE_OLD, _MYSQL_ADD_NEW),
    "CREATE TRIGGER osc_placement_usage_for_inventories AFTER INSERT ON "
    "inventories FOR EACH ROW INSERT IGNORE INTO usage_totals "
    "(resource_provider_id, resource_class_id, used) "
    "VALUES (NEW.resource_provider_id, NEW.resource_class_id, 0)",
    "CREATE TRIGGER osc_placement_provider_inserted AFTER INSERT ON "
    "resource_providers FOR EACH ROW " + _MYSQL_NEW_STAMP,
    "CREATE TRIGGER osc_placement_provider_deleted AFTER DELETE ON "
    "resource_providers FOR EACH ROW BEGIN "
    "DELETE FROM usage_totals WHERE resource_provider_id = OLD.id; "
    + _MYSQL_NEW_STAMP + "; END",
    "CREATE TRIGGER osc_placement_provider_updated AFTER UPDATE ON "
    "resource_providers FOR EACH ROW BEGIN IF NOT (%s) THEN %s; END IF; END"
    % (' AND '.join('OLD.%s <=> NEW.%s' % (c, c)
                    for c in PROVIDER_STRUCTURE_COLUMNS), _MYSQL_NEW_STAMP),
] + [
    "CREATE TRIGGER osc_placement_stamp_%s_%s AFTER %s ON %s FOR EACH ROW "
    % (table, event.lower(), event, table) + _MYSQL_NEW_STAMP
    for table in STAMPED_TABLES for event in ('INSERT', 'UPDATE', 'DELETE')
]

_SQLITE_NEW_STAMP = ("UPDATE provider_structure "
                     "SET version = lower(hex(randomblob(16))) WHERE id = 1;")
_SQLITE_ADD_NEW = """
    INSERT INTO usage_totals (resource_provider_id, resource_class_id, used)
    VALUES (NEW.resource_provider_id, NEW.resource_class_id, NEW.used)
    ON CONFLICT (resource_provider_id, resource_class_id)
    DO UPDATE SET used = used + excluded.used;"""
_SQLITE_TAKE_OLD = _MYSQL_TAKE_OLD + ';'

_SQLITE = [
    "CREATE TRIGGER osc_placement_usage_on_insert AFTER INSERT ON "
    "allocations BEGIN %s END" % _SQLITE_ADD_NEW,
    "CREATE TRIGGER osc_placement_usage_on_delete AFTER DELETE ON "
    "allocations BEGIN %s END" % _SQLITE_TAKE_OLD,
    "CREATE TRIGGER osc_placement_usage_on_update AFTER UPDATE ON "
    "allocations BEGIN %s %s END" % (_SQLITE_TAKE_OLD, _SQLITE_ADD_NEW),
    "CREATE TRIGGER osc_placement_usage_for_inventories AFTER INSERT ON "
    "inventories BEGIN INSERT OR IGNORE INTO usage_totals "
    "(resource_provider_id, resource_class_id, used) "
    "VALUES (NEW.resource_provider_id, NEW.resource_class_id, 0); END",
    "CREATE TRIGGER osc_placement_provider_inserted AFTER INSERT ON "
    "resource_providers BEGIN %s END" % _SQLITE_NEW_STAMP,
    "CREATE TRIGGER osc_placement_provider_deleted AFTER DELETE ON "
    "resource_providers BEGIN DELETE FROM usage_totals "
    "WHERE resource_provider_id = OLD.id; %s END" % _SQLITE_NEW_STAMP,
    "CREATE TRIGGER osc_placement_provider_updated AFTER UPDATE OF %s ON "
    "resource_providers WHEN %s BEGIN %s END"
    % (', '.join(PROVIDER_STRUCTURE_COLUMNS),
       ' OR '.join('OLD.%s IS NOT NEW.%s' % (c, c)
                   for c in PROVIDER_STRUCTURE_COLUMNS), _SQLITE_NEW_STAMP),
] + [
    "CREATE TRIGGER osc_placement_stamp_%s_%s AFTER %s ON %s BEGIN %s END"
    % (table, event.lower(), event, table, _SQLITE_NEW_STAMP)
    for table in STAMPED_TABLES for event in ('INSERT', 'UPDATE', 'DELETE')
]

TRIGGERS = {'postgresql': _POSTGRESQL, 'mysql': _MYSQL, 'sqlite': _SQLITE}


_TABLES = (
    ('usage_totals',
     lambda: (sa.Column('resource_provider_id', sa.Integer, primary_key=True,
                        autoincrement=False),
              sa.Column('resource_class_id', sa.Integer, primary_key=True,
                        autoincrement=False),
              sa.Column('used', sa.BigInteger, nullable=False))),
    ('provider_structure',
     lambda: (sa.Column('id', sa.Integer, primary_key=True,
                        autoincrement=False),
              sa.Column('version', sa.String(64), nullable=False))),
)


def _create_missing_tables(conn):
    for name, columns in _TABLES:
        if not sa.inspect(conn).has_table(name):
            op.create_table(name, *columns())


def _insert_stamp_row(conn):
    if conn.execute(sa.text(
            'SELECT count(*) FROM provider_structure')).scalar() == 0:
        conn.execute(sa.text('INSERT INTO provider_structure (id, version) '
                             'VALUES (1, :stamp)'),
                     {'stamp': uuid.uuid4().hex})


def _sum_usage(conn):
    """usage_totals from the allocations, overwriting any total a
    trigger wrote meanwhile (see the module's docstring)."""
    conn.execute(sa.text("""
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, sum(used)
        FROM allocations
        GROUP BY resource_provider_id, resource_class_id
    """ + ("ON DUPLICATE KEY UPDATE used = VALUES(used)"
           if conn.dialect.name == 'mysql' else
           "ON CONFLICT (resource_provider_id, resource_class_id) "
           "DO UPDATE SET used = excluded.used")))
    # A row for every inventory, as the inventories' trigger makes for
    # new ones: allocation writers lock them (objects/allocation.py).
    conn.execute(sa.text("""
        INSERT INTO usage_totals
            (resource_provider_id, resource_class_id, used)
        SELECT resource_provider_id, resource_class_id, 0
        FROM inventories AS i
        WHERE NOT EXISTS (
            SELECT 1 FROM usage_totals AS u
            WHERE u.resource_provider_id = i.resource_provider_id
              AND u.resource_class_id = i.resource_class_id)
    """))


def _created(pattern, statements):
    return [match.groups() for match in
            (re.search(pattern, s, re.DOTALL) for s in statements)
            if match]


def _drop_triggers(conn):
    """Drop every trigger and function this migration creates that
    exists."""
    statements = TRIGGERS[conn.dialect.name]
    postgresql = conn.dialect.name == 'postgresql'
    for name, table in _created(r'CREATE (?:CONSTRAINT )?TRIGGER (\w+)'
                                r'.*? ON (\w+)', statements):
        conn.exec_driver_sql('DROP TRIGGER IF EXISTS %s%s' % (
            name, ' ON %s' % table if postgresql else ''))
    for (name,) in _created(r'CREATE OR REPLACE FUNCTION (\w+)',
                            statements):
        conn.exec_driver_sql('DROP FUNCTION IF EXISTS %s()' % name)


def downgrade():
    """Hand the database back as upstream's alone: every trigger,
    function and table made above dropped; upstream's rows untouched."""
    conn = op.get_bind()
    _drop_triggers(conn)
    for name, _ in reversed(_TABLES):
        if sa.inspect(conn).has_table(name):
            op.drop_table(name)


def upgrade():
    conn = op.get_bind()
    _create_missing_tables(conn)
    _insert_stamp_row(conn)
    # Dropped first: a trigger left by a run that failed half way is
    # created again like the others.
    _drop_triggers(conn)
    for statement in TRIGGERS[conn.dialect.name]:
        conn.exec_driver_sql(statement)
    _sum_usage(conn)
