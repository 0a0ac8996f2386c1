# SPDX-License-Identifier: Apache-2.0
"""Alembic environment: runs against the connection handed in by
``osc_placement.server.db.migration``, keeping this server's history in
its own version table (upstream's alembic owns ``alembic_version``)."""

from alembic import context

from osc_placement.server.db import migration


def run_migrations_online():
    connection = context.config.attributes['connection']
    context.configure(connection=connection,
                      version_table=migration.VERSION_TABLE)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
