"""The providers' structure version: a token that changes whenever what
the candidate search reads, usage aside, changes.

The search reads providers and their trees, inventories, traits,
aggregates and class names. In a running cloud those change rarely (a
compute node registers, an operator sets a trait) while usage changes on
every claim, so a worker may keep the structure it read and, while the
version it read it under stands, read only the usage for the next
request (objects/candidate_fetch.py).

The version is kept without the writers' help: every statement on an
engine from ``create_engine`` is watched, and a write transaction
(``Database.write``) in which a statement changed a structure table sets
a new random version just before it commits. Being the last row it
locks, the version row adds no lock-order cycle with the rows the
transaction locked before. A transaction that does not commit leaves
the version alone.
"""

import re
import uuid

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.sql import dml

from osc_placement.server.db import tables

# The tables whose rows the candidate search keeps between requests.
STRUCTURE_TABLES = frozenset(table.name for table in (
    tables.resource_providers, tables.inventories, tables.traits,
    tables.resource_provider_traits, tables.placement_aggregates,
    tables.resource_provider_aggregates, tables.resource_classes))

# Execution option of a statement that writes a structure table without
# changing the structure: the generation bumps of allocation writes,
# which would otherwise make every claim a new version.
UNCHANGED = 'placement_structure_unchanged'

# conn.info key: a structure statement ran in this write transaction.
_CHANGED = 'placement_structure_changed'

_TEXT_MENTIONS = re.compile(r'\b(%s)\b' % '|'.join(sorted(STRUCTURE_TABLES)),
                            re.IGNORECASE)

_STRUCTURE = tables.provider_structure
READ_VERSION = sa.select(_STRUCTURE.c.version).where(_STRUCTURE.c.id == 1)


def watch(engine):
    """Note, on the connection, every statement that changes a structure
    table; ``Database.write`` then calls ``commit_version``."""
    @event.listens_for(engine, 'after_execute')
    def _after_execute(conn, clause, multiparams, params, options, result):
        if not options.get(UNCHANGED) and changes_structure(clause):
            conn.info[_CHANGED] = True


def changes_structure(clause):
    """Whether a statement may change a structure table. A textual
    statement counts if it names one: being wrong that way costs a
    re-read, the other way a stale answer."""
    if isinstance(clause, dml.UpdateBase):
        return clause.table.name in STRUCTURE_TABLES
    if isinstance(clause, sa.TextClause):
        clause = clause.text
    if isinstance(clause, str):
        return (not clause.lstrip().upper().startswith('SELECT')
                and _TEXT_MENTIONS.search(clause) is not None)
    return False


def begin_watching(conn):
    """Forget what an earlier transaction on this pooled connection did."""
    conn.info.pop(_CHANGED, None)


def commit_version(conn):
    """Set a new version if this transaction changed the structure."""
    if conn.info.pop(_CHANGED, False):
        conn.execute(_STRUCTURE.update().where(_STRUCTURE.c.id == 1)
                     .values(version=uuid.uuid4().hex))


def read_version(conn):
    """The current version, or None if the row is missing (nothing may be
    kept then)."""
    return conn.execute(READ_VERSION).scalar()
