"""Alembic migrations shipped inside the package."""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration

_HERE = os.path.dirname(os.path.abspath(__file__))


def _config(connection):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', os.path.join(_HERE, 'migrations'))
    cfg.attributes['connection'] = connection
    return cfg


def upgrade(engine, revision='head'):
    with engine.begin() as conn:
        command.upgrade(_config(conn), revision)


def stamp(engine, revision='head'):
    with engine.begin() as conn:
        command.stamp(_config(conn), revision)


def current_version(engine):
    with engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn).get_current_revision()
