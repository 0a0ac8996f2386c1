# SPDX-License-Identifier: Apache-2.0
"""gabbi fixtures: one database per test process, cleaned per YAML file.

The database is SQLite (a temporary file) unless OSC_PLACEMENT_TEST_DB_URL
names a MariaDB/MySQL or PostgreSQL server, e.g.
``postgresql+psycopg://postgres@127.0.0.1/`` or
``mysql+pymysql://root@127.0.0.1/``; then a uniquely named database is
created on it for this process (so parallel workers never collide) and
dropped at exit. The schema is created once per process with the alembic
migrations; each YAML file starts from empty tables.
"""

import atexit
import contextlib
import os
import shutil
import tempfile
import unittest
import uuid

from gabbi import fixture
import sqlalchemy as sa

from benchmarks import databases
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import sync
from osc_placement.server.db import tables

DB_URL_ENV = 'OSC_PLACEMENT_TEST_DB_URL'
_state = {'db': None, 'url': None, 'app': None}


def _create_server_database(server_url):
    """Create a uniquely named database on a server; return its URL."""
    url = databases.create(server_url, 'test')
    atexit.register(_drop_server_database, url)
    return sa.engine.make_url(url)


def _drop_server_database(url):
    if _state['db'] is not None:
        _state['db'].engine.dispose()
    databases.drop(url)


def _sqlite_url():
    tmpdir = tempfile.mkdtemp(prefix='ocp-test-')
    atexit.register(shutil.rmtree, tmpdir, True)
    return 'sqlite:///' + os.path.join(tmpdir, 'placement.sqlite')


def database():
    """The process-wide Database, created (and migrated) on first use."""
    if _state['db'] is None:
        server_url = os.environ.get(DB_URL_ENV)
        url = (_create_server_database(server_url) if server_url
               else _sqlite_url())
        engine = db_engine.create_engine(url)
        migration.upgrade(engine)
        _state['url'] = url.render_as_string(hide_password=False) \
            if hasattr(url, 'render_as_string') else url
        _state['db'] = db_engine.Database(engine)
    return _state['db']


def backend_name():
    """The suite's database kind: 'sqlite', 'postgresql' or 'mysql'."""
    url = os.environ.get(DB_URL_ENV)
    return sa.engine.make_url(url).get_backend_name() if url else 'sqlite'


def on_postgresql_only(standard_tests):
    """A ``load_tests`` answer: ``standard_tests`` in the suite's
    PostgreSQL pass, nothing in the others."""
    suite = unittest.TestSuite()
    if backend_name() == 'postgresql':
        suite.addTests(standard_tests)
    return suite


@contextlib.contextmanager
def recorded_statements(engine):
    """A list that fills with the SQL text of every statement SQLAlchemy
    sends on ``engine`` inside the block."""
    statements = []

    def record(conn, cursor, statement, *args):
        statements.append(statement)
    sa.event.listen(engine, 'before_cursor_execute', record)
    try:
        yield statements
    finally:
        sa.event.remove(engine, 'before_cursor_execute', record)


def reset_database(db):
    """Empty every table but the standard classes and traits."""
    rp = tables.resource_providers
    with db.write() as conn:
        for table in (tables.allocations, tables.consumers,
                      tables.consumer_types, tables.projects, tables.users,
                      tables.resource_provider_traits,
                      tables.resource_provider_aggregates,
                      tables.placement_aggregates, tables.inventories):
            conn.execute(table.delete())
        conn.execute(rp.update().values(parent_provider_id=None,
                                        root_provider_id=None))
        conn.execute(rp.delete())
        conn.execute(tables.traits.delete().where(
            tables.traits.c.name.like('CUSTOM\\_%', escape='\\')))
        conn.execute(tables.resource_classes.delete().where(
            tables.resource_classes.c.id >= tables.CUSTOM_RC_MIN_ID))
    sync.sync_standards(db)


def current_app(environ, start_response):
    """What gabbi's intercept talks to: the app of the running fixture.

    httpx's WSGI transport sets SCRIPT_NAME but leaves the prefix in
    PATH_INFO; split it the way a real WSGI server mount would."""
    script_name = environ.get('SCRIPT_NAME', '')
    path = environ.get('PATH_INFO', '')
    if script_name and path.startswith(script_name):
        environ['PATH_INFO'] = path[len(script_name):]
    return _state['app'](environ, start_response)


def intercept():
    return current_app


_ENV_NAMES = ('RP_UUID', 'RP_NAME', 'ALT_RP_UUID', 'ALT_RP_NAME',
              'PARENT_UUID', 'CHILD_UUID', 'GRANDCHILD_UUID',
              'AGG_1', 'AGG_2', 'AGG_3', 'CONSUMER_UUID',
              'ALT_CONSUMER_UUID', 'PROJECT_ID',
              'USER_ID')


class APIFixture(fixture.GabbiFixture):
    """noauth2, legacy policy defaults (as osc-placement's tests use),
    empty database, fresh uuids in the environment for the YAML."""

    conf_kwargs = {'enforce_new_defaults': False}

    def start_fixture(self):
        db = database()
        reset_database(db)
        for name in _ENV_NAMES:
            os.environ[name] = str(uuid.uuid4())
        conf = conf_mod.make_conf(_state['url'], sync_on_startup=False,
                                  **self.conf_kwargs)
        _state['app'] = app_mod.make_app(conf, db=db)

    def stop_fixture(self):
        _state['app'] = None


class SecureRBACFixture(APIFixture):
    """The new (secure RBAC) policy defaults."""

    conf_kwargs = {'enforce_new_defaults': True}


class CORSFixture(APIFixture):
    """CORS enabled for http://valid.example.com."""

    conf_kwargs = {'enforce_new_defaults': False,
                   'cors_allowed_origin': 'http://valid.example.com'}


def _insert_id(conn, table, **values):
    values.setdefault('created_at', tables.utcnow())
    return conn.execute(table.insert().values(**values)
                        ).inserted_primary_key[0]


def _seed_allocations(db):
    """A provider with VCPU/DISK_GB inventory and two consumers using it.

    The rows go in directly, so usage tests do not depend on the
    allocation routes they are not about.
    RP_UUID: VCPU 8, DISK_GB 100 (reserved 10). CONSUMER_UUID (project
    PROJECT_ID, user USER_ID, type INSTANCE) uses VCPU 2 + DISK_GB 20;
    ALT consumer (same project, user 'other', no type) uses VCPU 1.
    """
    env = os.environ
    with db.write() as conn:
        rp_id = _insert_id(conn, tables.resource_providers,
                           uuid=env['RP_UUID'], name=env['RP_NAME'],
                           generation=5)
        conn.execute(tables.resource_providers.update().values(
            root_provider_id=rp_id))
        for class_id, total, reserved in ((0, 8, 0), (2, 100, 10)):
            _insert_id(conn, tables.inventories, resource_provider_id=rp_id,
                       resource_class_id=class_id, total=total,
                       reserved=reserved, min_unit=1, max_unit=total,
                       step_size=1, allocation_ratio=1.0)
        project = _insert_id(conn, tables.projects,
                             external_id=env['PROJECT_ID'])
        user = _insert_id(conn, tables.users, external_id=env['USER_ID'])
        other = _insert_id(conn, tables.users, external_id='other')
        ctype = _insert_id(conn, tables.consumer_types, name='INSTANCE')
        _insert_id(conn, tables.consumers, uuid=env['CONSUMER_UUID'],
                   project_id=project, user_id=user, generation=1,
                   consumer_type_id=ctype)
        _insert_id(conn, tables.consumers, uuid=env['ALT_CONSUMER_UUID'],
                   project_id=project, user_id=other, generation=1)
        for consumer, class_id, used in ((env['CONSUMER_UUID'], 0, 2),
                                         (env['CONSUMER_UUID'], 2, 20),
                                         (env['ALT_CONSUMER_UUID'], 0, 1)):
            conn.execute(tables.allocations.insert(), [{
                'resource_provider_id': rp_id, 'consumer_id': consumer,
                'resource_class_id': class_id, 'used': used}])


class AllocationFixture(APIFixture):
    """APIFixture plus a provider with inventory and allocations."""

    def start_fixture(self):
        super().start_fixture()
        _seed_allocations(database())


class CandidateFixture(APIFixture):
    """APIFixture plus uuids for the allocation-candidate layouts (the
    YAML builds them over HTTP)."""

    def start_fixture(self):
        super().start_fixture()
        for name in ('CN1_UUID', 'CN2_UUID', 'SS_UUID', 'NUMA0_UUID',
                     'NUMA1_UUID', 'PF0_UUID', 'PF1_UUID'):
            os.environ[name] = str(uuid.uuid4())
