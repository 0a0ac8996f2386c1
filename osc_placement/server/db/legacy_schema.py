# SPDX-License-Identifier: Apache-2.0
"""Databases made by this server before it adopted upstream's schema.

Those kept their own history in ``alembic_version`` (``0001_initial`` to
``0004_usage_totals_bigint``) and named constraints and indexes their own
way. ``convert`` gives such a database upstream's names and shapes in
place, keeping every row, and drops the derived tables, which this
server's migrations build again. It keeps no list of old names: it
compares each reflected table with db/tables.py and changes what
differs, so it also finishes a conversion MySQL's per-statement DDL
commits left half done. SQLite cannot rename or drop a constraint, so
there a table that differs is rebuilt, rows and ids kept.
"""

import collections

import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables

LEGACY_REVISIONS = ('0001_initial', '0002_usage_totals',
                    '0003_provider_structure', '0004_usage_totals_bigint')
# The derived tables the old migrations made; ours make them anew.
OLD_DERIVED_TABLES = ('usage_totals', 'provider_structure')


class ConversionError(Exception):
    """The database lacks something the conversion cannot make up."""


def is_legacy(revision):
    return revision in LEGACY_REVISIONS


# -- a table's shape, from the database and from db/tables.py -----------

# The names, nullability, defaults and autoincrement of one table, keyed
# so that the same thing under two names compares equal:
#   primary_key: its name
#   uniques: {columns: name}
#   indexes: {(columns, unique): name}
#   foreign_keys: {(columns, referred table, referred columns): name}
#   columns: {name: (nullable, server default text, autoincrement)}
Shape = collections.namedtuple(
    'Shape', 'primary_key uniques indexes foreign_keys columns')


def _default_text(text):
    """A server default as comparable text: MySQL reports '0' where
    PostgreSQL and db/tables.py say 0."""
    if text is None:
        return None
    return str(text).strip("'()")


def _reflected_columns(inspector, name, dialect):
    columns = {}
    for column in inspector.get_columns(name):
        # SQLite's INTEGER PRIMARY KEY numbers rows whatever it is told;
        # there is nothing to compare.
        autoincrement = (column.get('autoincrement') is True
                         and dialect != 'sqlite')
        # PostgreSQL's autoincrement is a nextval() default: compared as
        # autoincrement, not as text.
        default = None if autoincrement else column.get('default')
        columns[column['name']] = (bool(column['nullable']),
                                   _default_text(default), autoincrement)
    return columns


def plain_indexes(inspector, name):
    """The table's indexes but those that are its unique constraints:
    PostgreSQL lists a constraint's own index among the indexes too, and
    MySQL keeps a unique constraint as nothing but a unique index."""
    constraints = {u['name'] for u in inspector.get_unique_constraints(name)}
    return [ix for ix in inspector.get_indexes(name)
            if 'duplicates_constraint' not in ix
            and ix['name'] not in constraints]


def reflected_shape(inspector, name, dialect):
    """The shape of table ``name`` as the database has it."""
    return Shape(
        primary_key=inspector.get_pk_constraint(name).get('name'),
        uniques={tuple(u['column_names']): u['name']
                 for u in inspector.get_unique_constraints(name)},
        indexes={(tuple(ix['column_names']), bool(ix['unique'])): ix['name']
                 for ix in plain_indexes(inspector, name)},
        foreign_keys={_fk_key(fk['constrained_columns'], fk['referred_table'],
                              fk['referred_columns']): fk['name']
                      for fk in inspector.get_foreign_keys(name)},
        columns=_reflected_columns(inspector, name, dialect))


def _fk_key(columns, referred_table, referred_columns):
    return (tuple(columns), referred_table, tuple(referred_columns))


def _constraint_key(fk):
    return _fk_key([c.name for c in fk.columns], fk.referred_table.name,
                   [e.column.name for e in fk.elements])


def _ordered_foreign_keys(table):
    """Foreign keys in declaration order, CREATE TABLE's, in which MySQL
    numbers unnamed ones."""
    return sorted(table.foreign_key_constraints,
                  key=lambda fk: fk._creation_order)


def _unnamed_fk_names(table, dialect):
    """{fk key: the name the database gives a foreign key created
    without one}, as in a database db/tables.py created."""
    names = {}
    unnamed = [fk for fk in _ordered_foreign_keys(table) if not fk.name]
    for number, fk in enumerate(unnamed, start=1):
        if dialect == 'postgresql':
            name = '%s_%s_fkey' % (table.name, fk.columns[0].name)
        elif dialect == 'mysql':
            name = '%s_ibfk_%d' % (table.name, number)
        else:
            name = None
        names[_constraint_key(fk)] = name
    return names


def _expected_primary_key(table, dialect):
    if table.primary_key.name:
        return table.primary_key.name
    return {'postgresql': '%s_pkey' % table.name}.get(dialect)


def _expected_columns(table, dialect):
    columns = {}
    for column in table.columns:
        autoincrement = (column is table.autoincrement_column
                         and dialect != 'sqlite')
        default = column.server_default
        text = (getattr(default.arg, 'text', default.arg)
                if default is not None else None)
        columns[column.name] = (column.nullable, _default_text(text),
                                autoincrement)
    return columns


def expected_shape(table, dialect):
    """The shape db/tables.py gives ``table`` on ``dialect``."""
    unnamed = _unnamed_fk_names(table, dialect)
    return Shape(
        primary_key=_expected_primary_key(table, dialect),
        uniques={tuple(c.name for c in u.columns): u.name
                 for u in table.constraints
                 if isinstance(u, sa.UniqueConstraint)},
        indexes={(tuple(c.name for c in ix.columns), bool(ix.unique)):
                 ix.name for ix in table.indexes},
        foreign_keys={_constraint_key(fk): fk.name or unnamed[
            _constraint_key(fk)] for fk in table.foreign_key_constraints},
        columns=_expected_columns(table, dialect))


# -- the conversion ------------------------------------------------------

def _target_tables():
    return list(tables.UPSTREAM_TABLES) + [tables.upstream_version]


def _drop_old_derived_tables(conn):
    for name in OLD_DERIVED_TABLES:
        sa.Table(name, sa.MetaData()).drop(conn, checkfirst=True)


def _check_columns_present(name, have, want):
    missing = sorted(set(want.columns) - set(have.columns))
    if missing:
        raise ConversionError('Table %s lacks column(s) %s; it is not a '
                              'database of this server.'
                              % (name, ', '.join(missing)))


def _check_tables_present(conn):
    present = set(sa.inspect(conn).get_table_names())
    missing = [t.name for t in _target_tables() if t.name not in present]
    if missing:
        raise ConversionError('Table(s) %s missing; this is not a database '
                              'of this server.' % ', '.join(missing))


def _shapes(conn, table):
    """(shape in the database, shape wanted) of ``table``."""
    inspector = sa.inspect(conn)
    dialect = conn.dialect.name
    have = reflected_shape(inspector, table.name, dialect)
    want = expected_shape(table, dialect)
    _check_columns_present(table.name, have, want)
    return have, want


def convert(conn):
    """Give a legacy database upstream's schema (see the module's
    docstring), inside the caller's transaction where the database has
    transactional DDL."""
    # Before any change: MySQL could not take one back.
    _check_tables_present(conn)
    _drop_old_derived_tables(conn)
    for table in _target_tables():
        convert_table(conn, table)
    if conn.dialect.name == 'sqlite':
        _check_references(conn)


def convert_table(conn, table):
    """Give one of upstream's tables the shape db/tables.py gives it;
    nothing happens to a table that has it already."""
    have, want = _shapes(conn, table)
    if have == want:
        return
    if conn.dialect.name == 'sqlite':
        _rebuild_sqlite_table(conn, table)
    else:
        _alter_table(conn, table, have, want)


# -- SQLite: rebuild a table that differs ---------------------------------

_COPY = 'osc_placement_legacy_copy'


def _check_references(conn):
    """Fail now, saying which rows, rather than at commit, if a rebuild
    lost a row that others refer to."""
    broken = conn.exec_driver_sql('PRAGMA foreign_key_check').fetchall()
    if broken:
        raise ConversionError('Rows refer to rows that are missing after '
                              'the conversion: %s' % broken[:10])


def _rebuild_sqlite_table(conn, table):
    # The connection enforces foreign keys and, inside a transaction,
    # cannot stop: the pragma is ignored there. Deferred, a dropped
    # parent's children count as violations only until its rows are back;
    # SQLite checks at commit. Nothing is renamed: SQLite's ALTER TABLE
    # RENAME would rewrite the other tables' references to the new name.
    conn.exec_driver_sql('PRAGMA defer_foreign_keys = ON')
    columns = ', '.join('"%s"' % c.name for c in table.columns)
    conn.exec_driver_sql('CREATE TEMP TABLE %s AS SELECT %s FROM "%s"'
                         % (_COPY, columns, table.name))
    conn.exec_driver_sql('DROP TABLE "%s"' % table.name)
    table.create(conn)
    conn.exec_driver_sql('INSERT INTO "%s" (%s) SELECT %s FROM temp.%s'
                         % (table.name, columns, columns, _COPY))
    conn.exec_driver_sql('DROP TABLE temp.%s' % _COPY)


# -- PostgreSQL and MySQL: alter in place --------------------------------

def _alter_table(conn, table, have, want):
    """Change ``table`` from shape ``have`` to ``want``: foreign keys
    dropped first (MySQL refuses to drop an index one needs) and added
    last (after the indexes they need)."""
    ops = _Operations(conn, table)
    to_add = _drop_or_rename_foreign_keys(ops, have, want)
    _match_named(ops.rename_unique, ops.drop_unique, ops.add_unique,
                 have.uniques, want.uniques)
    _match_named(ops.rename_index, ops.drop_index, ops.add_index,
                 have.indexes, want.indexes)
    if conn.dialect.name == 'postgresql' and \
            have.primary_key != want.primary_key:
        ops.rename_constraint(have.primary_key, want.primary_key)
    for name, wanted in want.columns.items():
        if have.columns[name] != wanted:
            ops.alter_column(name, have.columns[name], wanted)
    for key in to_add:
        ops.add_foreign_key(key)


def _match_named(rename, drop, add, have, want):
    """Rename, drop and add so that ``have`` ({key: name}) becomes
    ``want``."""
    for key, name in sorted(have.items()):
        if key not in want:
            drop(name)
        elif want[key] != name:
            rename(name, want[key])
    for key in sorted(set(want) - set(have)):
        add(key)


def _drop_or_rename_foreign_keys(ops, have, want):
    """Drop the foreign keys upstream lacks or names otherwise (rename
    them where the database can); return the keys to add, in CREATE
    TABLE's order."""
    rename = ops.conn.dialect.name == 'postgresql'
    to_add = set(want.foreign_keys) - set(have.foreign_keys)
    for key, name in sorted(have.foreign_keys.items()):
        if key not in want.foreign_keys:
            ops.drop_foreign_key(name)
        elif want.foreign_keys[key] != name:
            if rename:
                ops.rename_constraint(name, want.foreign_keys[key])
            else:
                ops.drop_foreign_key(name)
                to_add.add(key)
    order = [_constraint_key(fk) for fk in _ordered_foreign_keys(ops.table)]
    return [key for key in order if key in to_add]


class _Operations:
    """The DDL statements of one table, on PostgreSQL or MySQL."""

    def __init__(self, conn, table):
        self.conn = conn
        self.table = table
        self.mysql = conn.dialect.name == 'mysql'
        quote = conn.dialect.identifier_preparer.quote
        self.quote = quote
        self.name = quote(table.name)

    def _run(self, statement):
        self.conn.exec_driver_sql(statement)

    def _alter(self, clause):
        self._run('ALTER TABLE %s %s' % (self.name, clause))

    def _ddl(self, element):
        self.conn.execute(element)

    def rename_constraint(self, old, new):
        self._alter('RENAME CONSTRAINT %s TO %s'
                    % (self.quote(old), self.quote(new)))

    def rename_index(self, old, new):
        if self.mysql:
            self._alter('RENAME INDEX %s TO %s'
                        % (self.quote(old), self.quote(new)))
        else:
            self._run('ALTER INDEX %s RENAME TO %s'
                      % (self.quote(old), self.quote(new)))

    def rename_unique(self, old, new):
        # MySQL keeps a unique constraint as a unique index.
        if self.mysql:
            self.rename_index(old, new)
        else:
            self.rename_constraint(old, new)

    def drop_index(self, name):
        if self.mysql:
            self._run('DROP INDEX %s ON %s' % (self.quote(name), self.name))
        else:
            self._run('DROP INDEX %s' % self.quote(name))

    def drop_unique(self, name):
        if self.mysql:
            self.drop_index(name)
        else:
            self._alter('DROP CONSTRAINT %s' % self.quote(name))

    def drop_foreign_key(self, name):
        self._alter(('DROP FOREIGN KEY %s' if self.mysql
                     else 'DROP CONSTRAINT %s') % self.quote(name))

    def add_index(self, key):
        for index in self.table.indexes:
            if (tuple(c.name for c in index.columns), bool(index.unique)) \
                    == key:
                self._ddl(sa.schema.CreateIndex(index))

    def _add_constraint(self, constraint):
        # Not isolated: by default AddConstraint marks the shared
        # db/tables.py constraint so that every later CREATE TABLE in this
        # process leaves it out.
        self._ddl(sa.schema.AddConstraint(constraint,
                                          isolate_from_table=False))

    def add_unique(self, key):
        for constraint in self.table.constraints:
            if isinstance(constraint, sa.UniqueConstraint) and \
                    tuple(c.name for c in constraint.columns) == key:
                self._add_constraint(constraint)

    def add_foreign_key(self, key):
        for fk in self.table.foreign_key_constraints:
            if _constraint_key(fk) == key:
                self._add_constraint(fk)

    def alter_column(self, name, have, want):
        column = self.table.c[name]
        if self.mysql:
            self._modify_mysql_column(column)
            return
        self._alter_postgresql_column(column, have, want)

    def _modify_mysql_column(self, column):
        """MODIFY restates the whole column: type, NULL, DEFAULT and
        AUTO_INCREMENT (which then starts after the largest id) as
        db/tables.py has them."""
        # Made AUTO_INCREMENT, a column would renumber the row whose id
        # is 0: the inventories and allocations of VCPU would lose their
        # class.
        with db_engine.zero_is_an_id(self.conn):
            self._alter('MODIFY ' + str(sa.schema.CreateColumn(
                column).compile(dialect=self.conn.dialect)))

    def _alter_postgresql_column(self, column, have, want):
        nullable, default, autoincrement = want
        clause = 'ALTER COLUMN %s ' % self.quote(column.name)
        if have[0] != nullable:
            self._alter(clause + ('DROP NOT NULL' if nullable
                                  else 'SET NOT NULL'))
        if have[1] != default:
            self._alter(clause + ('DROP DEFAULT' if default is None
                                  else 'SET DEFAULT %s' % default))
        if autoincrement and not have[2]:
            self._add_sequence(column)

    def _add_sequence(self, column):
        """What SERIAL would have made: a sequence named as PostgreSQL
        names it, owned by the column, its default, started after the
        largest id (so a row inserted without one never collides)."""
        sequence = '%s_%s_seq' % (self.table.name, column.name)
        qualified = '%s.%s' % (self.name, self.quote(column.name))
        self._run('CREATE SEQUENCE %s AS integer OWNED BY %s'
                  % (self.quote(sequence), qualified))
        self._alter("ALTER COLUMN %s SET DEFAULT nextval('%s'::regclass)"
                    % (self.quote(column.name), sequence))
        self._run("SELECT setval('%s', max(%s)) FROM %s HAVING count(*) > 0"
                  % (sequence, self.quote(column.name), self.name))
