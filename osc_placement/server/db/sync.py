# SPDX-License-Identifier: Apache-2.0
"""Start-up sync of standard resource classes and traits.

Set-based: read the names present, insert the missing ones in one
multi-row statement. Custom rows are never touched; nothing is deleted.
"""

import os_resource_classes
import os_traits
import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables


def _missing_classes(conn):
    present = set(conn.execute(
        sa.select(tables.resource_classes.c.name)).scalars())
    return [{'id': index, 'name': name}
            for index, name in enumerate(os_resource_classes.STANDARDS)
            if name not in present]


def _missing_traits(conn):
    present = set(conn.execute(sa.select(tables.traits.c.name)).scalars())
    return [{'name': name} for name in os_traits.get_traits()
            if name not in present]


def _insert(conn, table, rows):
    if rows:
        now = tables.utcnow()
        for row in rows:
            row['created_at'] = now
        with db_engine.zero_is_an_id(conn):
            conn.execute(table.insert(), rows)


def sync_standards(db):
    """Insert missing standard classes and traits, each in its own
    transaction (a concurrent start-up that loses the race retries)."""
    for table, missing in ((tables.resource_classes, _missing_classes),
                           (tables.traits, _missing_traits)):
        for attempt in range(3):
            try:
                with db.write() as conn:
                    _insert(conn, table, missing(conn))
                break
            except sa.exc.IntegrityError:
                if attempt == 2:
                    raise
