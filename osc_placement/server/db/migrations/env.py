"""Alembic environment: runs against the connection handed in by
``osc_placement.server.db.migration``."""

from alembic import context

from osc_placement.server.db import tables


def run_migrations_online():
    connection = context.config.attributes['connection']
    context.configure(connection=connection,
                      target_metadata=tables.metadata)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
