# SPDX-License-Identifier: Apache-2.0
"""Scratch databases on a PostgreSQL or MariaDB/MySQL server, for the
benchmarks and the tests: created under a unique name, dropped by name.

    url = databases.create('postgresql+psycopg://postgres@127.0.0.1/',
                           'bench')
    ...
    databases.drop(url)
"""

import os
import uuid

import sqlalchemy as sa


def admin_engine(server_url):
    """An engine on a database of the server that always exists, outside
    transactions (CREATE and DROP DATABASE run in none)."""
    url = sa.engine.make_url(server_url)
    # URL.set ignores None: name a database that is always there.
    always = 'postgres' if url.get_backend_name() == 'postgresql' else 'mysql'
    return sa.create_engine(url.set(database=always),
                            isolation_level='AUTOCOMMIT')


def unique_name(prefix):
    """Unique across processes sharing the server (parallel test
    workers, several benchmarks)."""
    return 'ocp_%s_%d_%s' % (prefix, os.getpid(), uuid.uuid4().hex[:8])


def create(server_url, prefix, name=None):
    """Create a database (``name``, or a unique one from ``prefix``) on
    the server ``server_url`` names; return its URL as a string."""
    name = name or unique_name(prefix)
    admin = admin_engine(server_url)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s' % name)
    finally:
        admin.dispose()
    return sa.engine.make_url(server_url).set(database=name).render_as_string(
        hide_password=False)


def drop(db_url):
    """Drop the database ``db_url`` names, if it exists; on PostgreSQL
    whatever connections are still open to it (a server that failed to
    stop must not keep the drop waiting)."""
    url = sa.engine.make_url(db_url)
    admin = admin_engine(db_url)
    force = ' WITH (FORCE)' if url.get_backend_name() == 'postgresql' else ''
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s'
                                 % (url.database, force))
    finally:
        admin.dispose()


def copy(db_url, name):
    """A new database ``name`` on ``db_url``'s PostgreSQL server, a copy
    of ``db_url``'s (which no one may be connected to); its URL."""
    url = sa.engine.make_url(db_url)
    admin = admin_engine(db_url)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s TEMPLATE %s'
                                 % (name, url.database))
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)
