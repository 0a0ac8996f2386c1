# SPDX-License-Identifier: Apache-2.0
"""osc_placement.server.fixture: the PlacementFixture other projects'
functional tests use, exercised as they use it (real requests through
wsgi-intercept, real databases)."""

import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import uuid

import fixtures
import os_resource_classes
import os_traits
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_policy import opts as policy_opts
import requests
import sqlalchemy as sa
import testtools

from osc_placement.server import conf as placement_conf
from osc_placement.server.db import tables
from osc_placement.server import fixture as placement_fixture
from tests.server import fixtures as server_fixtures

LATEST = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest'}
# The last microversion whose allocation bodies need no consumer_type.
ALLOCATIONS_1_37 = {'x-auth-token': 'admin',
                    'openstack-api-version': 'placement 1.37'}


def _policy_default():
    return next(opt.default for opt in policy_opts._options
                if opt.name == 'enforce_new_defaults')


class _RestorePolicyDefault(fixtures.Fixture):
    """PlacementFixture, like upstream's, changes oslo.policy's
    process-wide enforce_new_defaults default; put it back so the other
    tests in this process see the library's own."""

    def _setUp(self):
        before = _policy_default()
        self.addCleanup(policy_opts.set_defaults, cfg.ConfigOpts(),
                        enforce_new_defaults=before)


class FixtureTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(_RestorePolicyDefault())

    def placement(self, **kwargs):
        return self.useFixture(placement_fixture.PlacementFixture(**kwargs))

    @staticmethod
    def get(fixture, path, headers=LATEST):
        return requests.get(fixture.endpoint + path, headers=headers)

    @staticmethod
    def create_provider(fixture, name):
        resp = requests.post(fixture.endpoint + '/resource_providers',
                             json={'name': name}, headers=LATEST)
        assert resp.status_code == 200, resp.text
        return resp.json()['uuid']

    def provider_names(self, fixture):
        resp = self.get(fixture, '/resource_providers')
        self.assertEqual(200, resp.status_code, resp.text)
        return sorted(rp['name'] for rp in resp.json()['resource_providers'])


class ConstructionTest(FixtureTestCase):

    def test_upstream_defaults(self):
        fixture = placement_fixture.PlacementFixture()
        self.assertEqual(('admin', None, True, True, True),
                         (fixture.token, fixture.conf_fixture, fixture.db,
                          fixture.use_intercept, fixture.register_opts))

    def test_keyword_arguments_kept(self):
        conf_fixture = config_fixture.Config(cfg.ConfigOpts())
        fixture = placement_fixture.PlacementFixture(
            token='user:project', conf_fixture=conf_fixture, db=False,
            use_intercept=False, register_opts=False)
        self.assertEqual(
            ('user:project', conf_fixture, False, False, False),
            (fixture.token, fixture.conf_fixture, fixture.db,
             fixture.use_intercept, fixture.register_opts))

    def test_configuration_as_upstream_sets_it(self):
        fixture = self.placement()
        conf = fixture.conf_fixture.conf
        self.assertEqual('noauth2', conf.api.auth_strategy)
        self.assertFalse(conf.oslo_policy.enforce_new_defaults)
        self.assertEqual('sqlite://', conf.placement_database.connection)

    def test_legacy_policy_defaults(self):
        """enforce_new_defaults=False: admin may, a plain user may not."""
        fixture = self.placement()
        allowed = self.get(fixture, '/resource_providers')
        self.assertEqual(200, allowed.status_code)
        denied = self.get(fixture, '/resource_providers',
                          {'x-auth-token': 'user:project'})
        self.assertEqual(403, denied.status_code)

    def test_endpoint_unique_per_fixture(self):
        first, second = self.placement(), self.placement()
        self.assertNotEqual(first.endpoint, second.endpoint)
        self.assertTrue(first.endpoint.endswith('/placement'))
        # The prefix is the application's SCRIPT_NAME, as behind a proxy.
        root = requests.get(first.endpoint + '/', headers=LATEST)
        self.assertEqual(200, root.status_code)

    def test_without_intercept_configuration_and_database_only(self):
        fixture = self.placement(use_intercept=False)
        self.assertIsNone(fixture.endpoint)
        conf = fixture.conf_fixture.conf
        self.assertEqual('noauth2', conf.api.auth_strategy)
        self.assertIn(id(conf), placement_fixture._databases)

    def test_caller_registered_options(self):
        conf_fixture = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        placement_conf.register_opts(conf_fixture.conf)
        fixture = self.placement(conf_fixture=conf_fixture,
                                 register_opts=False)
        self.assertIs(conf_fixture, fixture.conf_fixture)
        self.assertEqual([], self.provider_names(fixture))

    def test_db_false_needs_a_database(self):
        # Upstream's error for a configuration without a database.
        fixture = placement_fixture.PlacementFixture(db=False)
        self.assertRaises(cfg.RequiredOptError, fixture.setUp)
        fixture.cleanUp()


class InterceptTest(FixtureTestCase):

    def test_installed_while_set_up_removed_after(self):
        fixture = placement_fixture.PlacementFixture()
        with fixture:
            endpoint = fixture.endpoint
            self.assertEqual(200, requests.get(endpoint + '/resource_classes',
                                               headers=LATEST).status_code)
        # The fake host no longer answers: the request leaves the process
        # and fails to resolve or connect.
        self.assertRaises(requests.ConnectionError, requests.get,
                          endpoint + '/resource_classes', headers=LATEST,
                          timeout=5)

    def test_other_hosts_untouched(self):
        fixture = self.placement()
        other = fixture.endpoint.replace('/placement', '/other')
        self.assertEqual(404, requests.get(other, headers=LATEST).status_code)


class DatabaseTest(FixtureTestCase):

    def test_fresh_database_per_fixture(self):
        first = self.placement()
        self.create_provider(first, 'in-first')
        second = self.placement()
        self.assertEqual([], self.provider_names(second))
        self.assertEqual(['in-first'], self.provider_names(first))

    def test_standard_classes_and_traits_present(self):
        fixture = self.placement()
        classes = self.get(fixture, '/resource_classes').json()
        self.assertEqual(set(os_resource_classes.STANDARDS),
                         {rc['name'] for rc in classes['resource_classes']})
        traits = self.get(fixture, '/traits').json()['traits']
        self.assertEqual(set(os_traits.get_traits()), set(traits))

    def test_schema_built_once_then_copied(self):
        self.placement()
        template = placement_fixture._template
        fixture = self.placement()
        self.assertIs(template, placement_fixture._template)
        # The copy carries the template's migration stamp.
        db = placement_fixture._databases[id(fixture.conf_fixture.conf)]
        with db.engine.connect() as conn:
            self.assertIsNotNone(conn.exec_driver_sql(
                'SELECT version_num FROM alembic_version').scalar())

    def test_writes_of_a_copy_leave_the_template_alone(self):
        fixture = self.placement()
        resp = requests.put(fixture.endpoint + '/traits/CUSTOM_ONLY_HERE',
                            headers=LATEST)
        self.assertEqual(201, resp.status_code)
        traits = self.get(self.placement(), '/traits').json()['traits']
        self.assertNotIn('CUSTOM_ONLY_HERE', traits)

    def test_shared_database_with_db_false(self):
        """Upstream's pattern (Nova's test_bug_1679750): a Database
        fixture on a configuration, then fixtures with db=False on it
        serve the same data one after the other."""
        conf_fixture = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        placement_conf.register_opts(conf_fixture.conf)
        self.useFixture(placement_fixture.Database(conf_fixture,
                                                   set_config=True))
        with placement_fixture.PlacementFixture(
                conf_fixture=conf_fixture, db=False,
                register_opts=False) as first:
            self.create_provider(first, 'kept')
        with placement_fixture.PlacementFixture(
                conf_fixture=conf_fixture, db=False,
                register_opts=False) as second:
            self.assertEqual(['kept'], self.provider_names(second))


class HookTest(FixtureTestCase):

    def test_hook_runs_after_registration_before_database(self):
        seen = []

        class Recording(placement_fixture.PlacementFixture):
            def _configure_placement(self, conf_fixture):
                super()._configure_placement(conf_fixture)
                # Options are registered; no database yet.
                seen.append((conf_fixture.conf.placement_database.connection,
                             dict(placement_fixture._databases)))
                conf_fixture.config(group='placement',
                                    max_allocation_candidates=3)

        fixture = self.useFixture(Recording())
        self.assertEqual([(None, {})], seen)
        self.assertEqual(
            3, fixture.conf_fixture.conf.placement.max_allocation_candidates)

    def test_hook_connection_to_empty_sqlite_file(self):
        """Nova's threading mode: the hook names an empty WAL SQLite
        file; the fixture fills that file."""
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'placement.sqlite')
        with sqlite3.connect(path) as conn:
            conn.execute('PRAGMA journal_mode=WAL')

        class FileBacked(placement_fixture.PlacementFixture):
            def _configure_placement(self, conf_fixture):
                super()._configure_placement(conf_fixture)
                conf_fixture.config(connection='sqlite:///' + path,
                                    group='placement_database')

        fixture = self.useFixture(FileBacked())
        rp_uuid = self.create_provider(fixture, 'on-file')
        with sqlite3.connect(path) as conn:
            self.assertEqual([(rp_uuid,)], conn.execute(
                'SELECT uuid FROM resource_providers').fetchall())
            self.assertEqual(len(os_traits.get_traits()), conn.execute(
                'SELECT count(*) FROM traits').fetchone()[0])

    def test_hook_connection_to_the_suites_database(self):
        """The hook's URL is used as it is: the suite's server database
        (PostgreSQL/MariaDB runs) or a fresh SQLite file, migrated and
        synced."""
        url = self._database_url()

        class Configured(placement_fixture.PlacementFixture):
            def _configure_placement(self, conf_fixture):
                super()._configure_placement(conf_fixture)
                conf_fixture.config(connection=url,
                                    group='placement_database')

        fixture = self.useFixture(Configured())
        rp_uuid = self.create_provider(fixture, 'configured')
        engine = sa.create_engine(url)
        self.addCleanup(engine.dispose)
        with engine.connect() as conn:
            self.assertEqual([rp_uuid], list(conn.execute(
                sa.select(tables.resource_providers.c.uuid)).scalars()))

    def _database_url(self):
        server_url = os.environ.get(server_fixtures.DB_URL_ENV)
        if server_url:
            url = server_fixtures._create_server_database(server_url)
            return url.render_as_string(hide_password=False)
        tmp = self.useFixture(fixtures.TempDir()).path
        return 'sqlite:///' + os.path.join(tmp, 'configured.sqlite')


def _empty_wal_sqlite_file(label):
    """What Nova master's hook makes for Placement in threading mode: an
    empty temporary SQLite file switched to WAL before anything else
    opens it. Returns (URL, path)."""
    fd, path = tempfile.mkstemp(prefix='placement-%s-' % label,
                                suffix='.sqlite')
    os.close(fd)
    with sqlite3.connect(path) as conn:
        conn.execute('PRAGMA journal_mode=WAL')
    return 'sqlite:///' + path, path


class NovaMasterLikeFixture(placement_fixture.PlacementFixture):
    """A subclass doing what Nova master's PlacementFixture does in
    threading mode (Nova commit adcccfeac3): its hook calls super(), then,
    when the fixture makes the database, gives each use its own WAL SQLite
    file under a NestedTempfile directory through the configuration."""

    def __init__(self, threading_mode=True, **kwargs):
        super().__init__(**kwargs)
        self.threading_mode = threading_mode
        self.database_path = None

    def _configure_placement(self, conf_fixture):
        super()._configure_placement(conf_fixture)
        if self.threading_mode and self.db:
            self.useFixture(fixtures.NestedTempfile())
            url, self.database_path = _empty_wal_sqlite_file('placement')
            conf_fixture.config(connection=url, group='placement_database')


class NovaMasterHookTest(FixtureTestCase):
    """Nova master's subclass on our fixture: the database is its file,
    in WAL mode, and the Placement on it serves many threads at once (Nova
    services run as native threads in its threading mode)."""

    THREADS = 8
    CONSUMERS_PER_THREAD = 4

    def nova_like(self, **kwargs):
        return self.useFixture(NovaMasterLikeFixture(**kwargs))

    def test_database_is_the_hooks_wal_file(self):
        fixture = self.nova_like()
        path = fixture.database_path
        self.assertEqual(
            'sqlite:///' + path,
            fixture.conf_fixture.conf.placement_database.connection)
        rp_uuid = self.create_provider(fixture, 'on-file')
        with sqlite3.connect(path) as conn:
            self.assertEqual('wal', conn.execute(
                'PRAGMA journal_mode').fetchone()[0])
            self.assertEqual([(rp_uuid,)], conn.execute(
                'SELECT uuid FROM resource_providers').fetchall())
            self.assertEqual(len(os_traits.get_traits()), conn.execute(
                'SELECT count(*) FROM traits').fetchone()[0])
            self.assertIsNotNone(conn.execute(
                'SELECT version_num FROM alembic_version').fetchone())

    def test_each_use_its_own_file_removed_at_cleanup(self):
        with NovaMasterLikeFixture() as first:
            self.create_provider(first, 'first-only')
            with NovaMasterLikeFixture() as second:
                self.assertNotEqual(first.database_path,
                                    second.database_path)
                self.assertEqual([], self.provider_names(second))
            first_path = first.database_path
            self.assertTrue(os.path.exists(first_path))
        # NestedTempfile's directory went with the fixture.
        self.assertFalse(os.path.exists(first_path))

    def test_eventlet_mode_keeps_in_memory_default(self):
        fixture = self.nova_like(threading_mode=False)
        self.assertIsNone(fixture.database_path)
        self.assertEqual(
            placement_fixture.IN_MEMORY,
            fixture.conf_fixture.conf.placement_database.connection)
        self.create_provider(fixture, 'in-memory')

    def test_concurrent_threads_on_the_wal_file(self):
        """Threads create providers and allocate from one shared
        provider at the same moment: every request succeeds and the file
        holds all of their writes."""
        fixture = self.nova_like()
        self.check_concurrent_use(fixture)
        with sqlite3.connect(fixture.database_path) as conn:
            self.assertEqual(
                self.THREADS * self.CONSUMERS_PER_THREAD, conn.execute(
                    'SELECT count(*) FROM allocations').fetchone()[0])

    def test_concurrent_threads_on_the_in_memory_default(self):
        """The default database, one shared connection, serves threads
        too (one transaction at a time)."""
        self.check_concurrent_use(self.nova_like(threading_mode=False))

    def check_concurrent_use(self, fixture):
        shared = self.create_provider(fixture, 'shared')
        consumers = self.THREADS * self.CONSUMERS_PER_THREAD
        self.put_vcpu_inventory(fixture, shared, consumers)
        failures = run_in_threads(
            self.THREADS,
            lambda index: self.thread_work(fixture, shared, index))
        self.assertEqual([], failures)
        usages = self.get(
            fixture, '/resource_providers/%s/usages' % shared).json()
        self.assertEqual({'VCPU': consumers}, usages['usages'])
        self.assertEqual(self.THREADS + 1, len(self.provider_names(fixture)))

    @staticmethod
    def put_vcpu_inventory(fixture, rp_uuid, total):
        resp = requests.put(
            fixture.endpoint + '/resource_providers/%s/inventories' % rp_uuid,
            json={'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': total}}},
            headers=LATEST)
        assert resp.status_code == 200, resp.text

    def thread_work(self, fixture, shared, index):
        """One thread's requests; the unexpected answers, as text."""
        failures = []
        resp = requests.post(fixture.endpoint + '/resource_providers',
                             json={'name': 'thread-%d' % index},
                             headers=LATEST)
        if resp.status_code != 200:
            failures.append('create: %d %s' % (resp.status_code, resp.text))
        for _ in range(self.CONSUMERS_PER_THREAD):
            resp = requests.put(
                fixture.endpoint + '/allocations/' + str(uuid.uuid4()),
                json={'allocations': {shared: {'resources': {'VCPU': 1}}},
                      'project_id': str(uuid.uuid4()),
                      'user_id': str(uuid.uuid4()),
                      'consumer_generation': None},
                headers=ALLOCATIONS_1_37)
            if resp.status_code != 204:
                failures.append('allocate: %d %s'
                                % (resp.status_code, resp.text))
        return failures


def run_in_threads(count, work):
    """Run work(index) in ``count`` threads released together; the
    failures they return (or raise), all threads' together."""
    barrier = threading.Barrier(count)
    failures = []

    def run(index):
        try:
            barrier.wait()
            failures.extend(work(index))
        except Exception as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=run, args=(index,))
               for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


class PytestFixtureTest(testtools.TestCase):

    def test_pytest_fixture(self):
        """A pytest user's test file, run by pytest itself."""
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'test_uses_placement.py'), 'w') as f:
                f.write(textwrap.dedent('''\
                    import requests
                    from osc_placement.server.fixture import placement

                    HEADERS = {'x-auth-token': 'admin'}

                    def test_fresh(placement):
                        url = placement.endpoint + '/resource_providers'
                        assert requests.post(url, json={'name': 'a'},
                                             headers=HEADERS).ok
                        assert len(requests.get(url, headers=HEADERS)
                                   .json()['resource_providers']) == 1

                    def test_fresh_again(placement):
                        test_fresh(placement)
                    '''))
            result = subprocess.run(
                [sys.executable, '-m', 'pytest', '-q',
                 '-p', 'no:cacheprovider', tmp],
                capture_output=True, text=True, cwd=tmp)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn('2 passed', result.stdout)
