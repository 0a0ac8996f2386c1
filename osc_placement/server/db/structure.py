# SPDX-License-Identifier: Apache-2.0
"""The providers' structure stamp: a token that changes whenever what
the candidate search reads, usage aside, changes.

Providers, trees, inventories, traits, aggregates and class names change
rarely, usage on every claim: so a worker may keep the structure it
read and, while its stamp stands, read only the usage for the next
request (candidates/kept.py). Database triggers set a new stamp
in every transaction that changes those rows, whoever writes
(db/migrations/versions/1001_derived_data.py); provider generation bumps
are not structure and leave it alone.
"""

import sqlalchemy as sa

from osc_placement.server.db import tables

_STRUCTURE = tables.provider_structure
# The schema's column is called ``version``; in the code it is the stamp.
READ_STAMP = sa.select(_STRUCTURE.c.version).where(_STRUCTURE.c.id == 1)


def read_stamp(conn):
    """The current stamp, or None without the row (nothing is kept then)."""
    return conn.execute(READ_STAMP).scalar()
