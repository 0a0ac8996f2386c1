"""The providers' structure stamp: a token that changes whenever what
the candidate search reads, usage aside, changes.

The search reads providers and their trees, inventories, traits,
aggregates and class names. In a running cloud those change rarely (a
compute node registers, an operator sets a trait) while usage changes on
every claim, so a worker may keep the structure it read and, while the
stamp it read it under stands, read only the usage for the next request
(objects/candidate_fetch.py).

Every writer of a structure table says so: it calls :func:`changed` in
its write transaction (``Database.write``), which then sets a new random
stamp just before it commits. Being the last row it locks, the stamp row
adds no lock-order cycle with the rows the transaction locked before. A
transaction that does not commit leaves the stamp alone. Provider
generations live in a structure table but are not structure: their
bumps (every allocation write) do not call :func:`changed`.

A writer outside ``Database.write`` (a bulk load) sets a new stamp
itself with :func:`write_new_stamp`, in its own transaction.
"""

import contextlib
import uuid

import sqlalchemy as sa

from osc_placement.server.db import tables

# conn.info key, present while a write transaction runs: whether a
# writer said it changed the structure.
_CHANGED = 'placement_structure_changed'

_STRUCTURE = tables.provider_structure
# The schema's column is still called ``version`` (a migration would
# gain nothing); in the code it is the stamp.
READ_STAMP = sa.select(_STRUCTURE.c.version).where(_STRUCTURE.c.id == 1)


def changed(conn):
    """Note that this write transaction changes a structure table.

    Outside ``Database.write`` nobody would set the new stamp, so a
    kept structure would go stale: fail loudly instead."""
    if _CHANGED not in conn.info:
        raise RuntimeError('structure.changed() outside a write transaction')
    conn.info[_CHANGED] = True


@contextlib.contextmanager
def stamping(conn):
    """Around the body of a write transaction: writers may call
    :func:`changed`, and if one did a new stamp is set as the body ends
    (before the caller commits). The note never outlives the body, so a
    pooled connection starts its next transaction clean."""
    conn.info[_CHANGED] = False
    try:
        yield
        if conn.info[_CHANGED]:
            write_new_stamp(conn)
    finally:
        conn.info.pop(_CHANGED, None)


def write_new_stamp(conn):
    """Set a new random stamp, in ``conn``'s transaction."""
    conn.execute(_STRUCTURE.update().where(_STRUCTURE.c.id == 1)
                 .values(version=uuid.uuid4().hex))


def read_stamp(conn):
    """The current stamp, or None if the row is missing (nothing may be
    kept then)."""
    return conn.execute(READ_STAMP).scalar()
