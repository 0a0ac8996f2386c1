# SPDX-License-Identifier: Apache-2.0
"""A Placement for other projects' functional tests.

``PlacementFixture`` has the constructor, attributes and hook of
upstream's ``placement.tests.functional.fixtures.placement.
PlacementFixture``, so a project switches with one import::

    from osc_placement.server import fixture as placement_fixtures

``Database`` has the signature of upstream's ``placement.tests.fixtures.
Database``; the pytest fixture ``placement`` yields a set-up
``PlacementFixture``. Each use gets a fresh database copied from a
template built once per process, which is quicker than migrating.
"""

import sqlite3
import threading
import uuid

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_policy import opts as policy_opts
import sqlalchemy as sa
from wsgi_intercept import interceptor

from osc_placement.server import app as placement_app
from osc_placement.server import conf as placement_conf
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import sync

# Upstream's Database fixture points the configuration at in-memory
# SQLite; so do we when nothing else is configured.
IN_MEMORY = 'sqlite://'

# The Database each ConfigOpts (by id: it is not hashable) was given by
# a Database fixture, until that fixture's cleanup, so a
# PlacementFixture(db=False) on the same configuration serves the same
# data (an in-memory database cannot be reopened by its URL).
_databases = {}

_template = None
_template_lock = threading.Lock()


def _template_connection():
    """The process's template database: an in-memory SQLite connection
    holding the migrated schema and the standard classes and traits.
    Built on first use; afterwards only read (copied from)."""
    global _template
    with _template_lock:
        if _template is None:
            engine = db_engine.create_engine(IN_MEMORY)
            migration.upgrade(engine)
            sync.sync_standards(db_engine.Database(engine))
            # The engine's one connection (StaticPool) is the template;
            # the engine is kept with it so the connection stays open.
            _template = (engine, engine.raw_connection().driver_connection)
        return _template[1]


def _copy_template(target):
    """Copy the template into the sqlite3 connection ``target``."""
    source = _template_connection()
    with _template_lock:
        source.backup(target)


def _is_empty_sqlite_file(url):
    if url.get_backend_name() != 'sqlite' or _is_in_memory(url):
        return False
    with sqlite3.connect(url.database) as conn:
        return conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
        ).fetchone()[0] == 0


def _is_in_memory(url):
    return url.get_backend_name() == 'sqlite' and url.database in (
        None, '', ':memory:')


def _new_database(connection, db_conf, write_retries):
    """A Database on ``connection`` (a SQLAlchemy URL) holding the schema
    and the standard classes and traits.

    In-memory SQLite and an empty SQLite file get a copy of the template.
    Any other database (a file with tables, PostgreSQL, MySQL) is used as
    it is, upgraded to the current schema and synced as a server's
    start-up would."""
    url = sa.engine.make_url(connection)
    engine = db_engine.create_engine(url, db_conf)
    db = db_engine.Database(engine, write_retries)
    if _is_in_memory(url):
        with engine.connect() as conn:
            _copy_template(conn.connection.driver_connection)
    elif _is_empty_sqlite_file(url):
        target = sqlite3.connect(url.database)
        try:
            _copy_template(target)
        finally:
            target.close()
    else:
        migration.upgrade(engine)
        sync.sync_standards(db)
    return db


class Database(fixtures.Fixture):
    """A fresh Placement database for ``conf_fixture``'s configuration.

    With ``set_config`` the ``[placement_database] connection`` option is
    registered if needed and, unless something (a subclass's
    ``_configure_placement`` hook) already set it, pointed at in-memory
    SQLite, as upstream's fixture does. The database is the one that
    option names."""

    def __init__(self, conf_fixture, set_config=False):
        super().__init__()
        self.conf_fixture = conf_fixture
        self.set_config = set_config
        self.db = None

    def setUp(self):
        super().setUp()
        conf = self.conf_fixture.conf
        if self.set_config:
            _register_connection_opt(conf)
            if not conf.placement_database.connection:
                self.conf_fixture.config(connection=IN_MEMORY,
                                         group='placement_database')
        connection = _connection_of(conf) or IN_MEMORY
        self.db = _new_database(connection, _db_conf(conf),
                                _write_retries(conf))
        self.addCleanup(self.db.engine.dispose)
        _databases[id(conf)] = self.db
        self.addCleanup(_databases.pop, id(conf), None)


def _register_connection_opt(conf):
    try:
        conf.register_opt(cfg.StrOpt('connection'),
                          group='placement_database')
    except cfg.DuplicateOptError:
        pass  # registered already, with the server's other options


def _connection_of(conf):
    try:
        return conf.placement_database.connection
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return None


def _db_conf(conf):
    """The ``[placement_database]`` group if the server's options are
    registered on ``conf`` (they tune the engine), else None."""
    try:
        db_conf = conf.placement_database
        db_conf.sqlite_busy_timeout
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return None
    return db_conf


def _write_retries(conf):
    try:
        return conf.placement.allocation_conflict_retry_count
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return 10


class PlacementFixture(fixtures.Fixture):
    """Placement for a test: configuration, a fresh database and the WSGI
    application intercepted at ``endpoint``.

    :param token: the token callers send (noauth2: ``user[:project]``).
    :param conf_fixture: an ``oslo_config.fixture.Config``; by default new.
    :param db: set up a fresh database; if False, use the one a
               ``Database`` fixture made, else ``[placement_database]``'s.
    :param use_intercept: if False, set up only the configuration and db.
    :param register_opts: register the server's options.
    :param admin_without_token: serve token-less requests as the admin
        (``[api] noauth_admin_without_token``, ours), for clients such as
        neutron-lib's ``NoAuthClient``.
    """

    def __init__(self, token='admin', conf_fixture=None, db=True,
                 use_intercept=True, register_opts=True,
                 admin_without_token=False):
        super().__init__()
        self.token = token
        self.admin_without_token = admin_without_token
        self.db = db
        self.use_intercept = use_intercept
        self.conf_fixture = conf_fixture
        self.register_opts = register_opts
        self.endpoint = None
        self.app = None

    def _configure_placement(self, conf_fixture):
        """Allow subclasses to modify config options after the config
        fixture is initialized and the placement options are registered
        (upstream's hook; a ``[placement_database] connection`` set here
        is the database the fixture fills)."""

    def setUp(self):
        super().setUp()
        if not self.conf_fixture:
            self.conf_fixture = self.useFixture(
                config_fixture.Config(cfg.ConfigOpts()))
        conf = self.conf_fixture.conf
        if self.register_opts:
            placement_conf.register_opts(conf)
        self._configure_placement(self.conf_fixture)
        if self.db:
            self.useFixture(Database(self.conf_fixture, set_config=True))
        # As upstream's fixture does: the projects using it (Nova) change
        # this default to True for themselves; Placement runs with False.
        # Like upstream's, this changes oslo.policy's process-wide default.
        policy_opts.set_defaults(conf, enforce_new_defaults=False)
        self.conf_fixture.config(group='api', auth_strategy='noauth2')
        if self.admin_without_token:
            self.conf_fixture.config(group='api',
                                     noauth_admin_without_token=True)
        conf([], default_config_files=[])
        # No policy file: the rules are the defaults, as with upstream's
        # policy fixture (its policy_file names a file that is not there).
        self.conf_fixture.config(group='oslo_policy',
                                 policy_file='placement-fixture-defaults')
        if self.use_intercept:
            self._intercept(conf)

    def _intercept(self, conf):
        self.app = placement_app.make_app(conf, db=self._database(conf))
        self.endpoint = 'http://%s/placement' % uuid.uuid4()
        intercept = interceptor.RequestsInterceptor(
            lambda: self.app, url=self.endpoint)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)

    def _database(self, conf):
        db = _databases.get(id(conf))
        if db is None:
            # db=False and no Database fixture: the configured database.
            connection = conf.placement_database.connection
            if not connection:
                raise ValueError(
                    'PlacementFixture(db=False) needs a Database fixture '
                    'on the same configuration or [placement_database] '
                    'connection')
            db = _new_database(connection, conf.placement_database,
                               conf.placement.allocation_conflict_retry_count)
            self.addCleanup(db.engine.dispose)
        return db


try:
    import pytest
except ImportError:  # pytest is optional: only its users need it
    pytest = None

if pytest is not None:
    @pytest.fixture
    def placement():
        """A set-up PlacementFixture; ``placement.endpoint`` is the URL."""
        with PlacementFixture() as placement_fixture:
            yield placement_fixture
