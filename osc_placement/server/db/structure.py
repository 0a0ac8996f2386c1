# SPDX-License-Identifier: Apache-2.0
"""The providers' structure stamp: a token that changes whenever what
the candidate search reads, usage aside, changes.

The search reads providers and their trees, inventories, traits,
aggregates and class names. In a running cloud those change rarely (a
compute node registers, an operator sets a trait) while usage changes on
every claim, so a worker may keep the structure it read and, while the
stamp it read it under stands, read only the usage for the next request
(candidates/kept.py).

Database triggers set a new stamp in every transaction that changes a
row of those tables, whoever writes it: this server, upstream Placement
beside it, plain SQL (db/migrations/versions/1001_derived_data.py).
Provider generations live in a structure table but are not structure:
their bumps (every allocation write) leave the stamp alone.
"""

import sqlalchemy as sa

from osc_placement.server.db import tables

_STRUCTURE = tables.provider_structure
# The schema's column is called ``version``; in the code it is the stamp.
READ_STAMP = sa.select(_STRUCTURE.c.version).where(_STRUCTURE.c.id == 1)


def read_stamp(conn):
    """The current stamp, or None if the row is missing (nothing may be
    kept then)."""
    return conn.execute(READ_STAMP).scalar()
