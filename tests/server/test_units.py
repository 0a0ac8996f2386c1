"""Server pieces tested directly: microversions, policy, config, command
line, start-up, persistence and concurrency."""

import io
import os
import threading
import uuid as uuidlib

import fixtures
import sqlalchemy as sa
import testtools
import webob
from oslo_policy import policy as oslo_policy

from osc_placement.server import app as app_mod
from osc_placement.server import cmd
from osc_placement.server import conf as conf_mod
from osc_placement.server import errors
from osc_placement.server import microversion
from osc_placement.server import policy
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import tables
from tests.server import fixtures as api_fixtures

# The newest schema revision.
HEAD_REVISION = '0004_usage_totals_bigint'


class TestMicroversion(testtools.TestCase):

    def test_default_is_minimum(self):
        self.assertEqual((1, 0), microversion.parse(None))
        self.assertEqual((1, 0), microversion.parse('compute 2.1'))

    def test_latest(self):
        self.assertEqual((1, 39), microversion.parse('placement latest'))

    def test_comparable_tuple(self):
        version = microversion.parse('placement 1.25')
        self.assertTrue(version >= (1, 25))
        self.assertTrue(version < (1, 26))
        self.assertEqual('1.25', str(version))
        self.assertTrue(version.supports('error_codes'))
        self.assertFalse(version.supports('reserved_eq_total'))

    def test_bad_and_unacceptable(self):
        self.assertRaises(errors.BadRequest, microversion.parse,
                          'placement 1.x')
        err = self.assertRaises(errors.NotAcceptable, microversion.parse,
                                'placement 1.40')
        self.assertEqual({'max_version': '1.39', 'min_version': '1.0'},
                         err.extra)

    def test_table_is_contiguous(self):
        minors = [version.minor for version in microversion.KNOWN]
        self.assertEqual(list(range(40)), minors)


class TestPolicy(testtools.TestCase):

    def _enforcer(self, **kwargs):
        return policy.make_enforcer(conf_mod.make_conf('sqlite://',
                                                       **kwargs))

    def _allowed(self, enforcer, roles, name, scope=None, target=None):
        try:
            policy.authorize(enforcer, policy.Context('u', 'p', roles,
                                                      scope), name, target)
        except errors.Forbidden:
            return False
        return True

    def test_every_upstream_rule_is_registered(self):
        names = {rule.name for rule in policy.list_rules()}
        self.assertEqual(38, len(names))
        self.assertIn('placement:reshaper:reshape', names)
        self.assertIn('placement:allocation_candidates:list', names)

    def test_reshaper_is_service_only_with_new_defaults(self):
        enforcer = self._enforcer(enforce_new_defaults=True)
        name = 'placement:reshaper:reshape'
        self.assertFalse(self._allowed(enforcer, ['admin'], name))
        self.assertTrue(self._allowed(enforcer, ['service'], name))

    def test_reshaper_admin_allowed_with_legacy_defaults(self):
        enforcer = self._enforcer(enforce_new_defaults=False)
        self.assertTrue(self._allowed(enforcer, ['admin'],
                                      'placement:reshaper:reshape'))

    def test_system_scope_gets_policy_name(self):
        enforcer = self._enforcer()
        err = self.assertRaises(
            errors.Forbidden, policy.authorize, enforcer,
            policy.Context('u', None, ['admin'], 'all'),
            'placement:traits:list')
        self.assertEqual('placement:traits:list', err.detail)

    def test_policy_file_overrides_defaults(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            f.write('"placement:traits:list": "role:reader"\n')
        enforcer = self._enforcer(policy_file=path)
        self.assertTrue(self._allowed(enforcer, ['reader'],
                                      'placement:traits:list'))
        self.assertFalse(self._allowed(enforcer, ['admin'],
                                       'placement:traits:list'))

    def test_decision_cache_follows_policy_file_changes(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            f.write('"placement:traits:list": "role:reader"\n')
        enforcer = self._enforcer(policy_file=path)
        self.assertTrue(self._allowed(enforcer, ['reader'],
                                      'placement:traits:list'))
        with open(path, 'w') as f:
            f.write('"placement:traits:list": "role:member"\n')
        stat = os.stat(path)
        os.utime(path, (stat.st_atime, stat.st_mtime + 10))
        # Within RULES_CHECK_SECONDS of the last check the old rules hold.
        with fixtures.MonkeyPatch(
                'osc_placement.server.policy.RULES_CHECK_SECONDS', 3600):
            self.assertTrue(self._allowed(enforcer, ['reader'],
                                          'placement:traits:list'))
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.policy.RULES_CHECK_SECONDS', 0))
        self.assertFalse(self._allowed(enforcer, ['reader'],
                                       'placement:traits:list'))

    def test_rules_are_documented_oslo_rules(self):
        for rule in policy.list_rules():
            self.assertIsInstance(rule, oslo_policy.RuleDefault)


def _request(app, method, path, body=None, version='latest', **headers):
    headers.setdefault('X-Auth-Token', 'admin')
    headers['OpenStack-API-Version'] = 'placement ' + version
    req = webob.Request.blank(path, method=method, headers=headers)
    if body is not None:
        req.body = body.encode()
        req.content_type = 'application/json'
    return req.get_response(app)


class SQLiteFileTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///' + os.path.join(tmp, 'placement.sqlite')

    def make_app(self):
        return app_mod.make_app(conf_mod.make_conf(
            self.url, enforce_new_defaults=False))


class TestStartup(SQLiteFileTestCase):

    def test_restart_keeps_providers(self):
        first = self.make_app()
        resp = _request(first, 'POST', '/resource_providers',
                        '{"name": "keep me"}')
        self.assertEqual(200, resp.status_int)
        second = self.make_app()
        resp = _request(second, 'GET', '/resource_providers')
        self.assertEqual(['keep me'], [
            p['name'] for p in resp.json['resource_providers']])

    def test_schema_is_at_head_and_standards_synced(self):
        app = self.make_app()
        resp = _request(app, 'GET', '/resource_classes')
        self.assertIn('VCPU', [c['name']
                               for c in resp.json['resource_classes']])
        from osc_placement.server.db import engine
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(
                             engine.create_engine(self.url)))

    def test_missing_connection_refuses_to_start(self):
        conf = conf_mod.make_conf(None)
        self.assertRaises(ValueError, app_mod.make_app, conf)

    def test_content_length_checks(self):
        app = self.make_app()
        req = webob.Request.blank('/resource_providers', method='POST',
                                  headers={'X-Auth-Token': 'admin'})
        req.environ['CONTENT_LENGTH'] = 'pony'
        resp = req.get_response(app)
        self.assertEqual(400, resp.status_int)
        self.assertIn('content-length header must be an integer',
                      resp.json['errors'][0]['detail'])
        req = webob.Request.blank('/resource_providers', method='POST',
                                  headers={'X-Auth-Token': 'admin'})
        req.environ['CONTENT_LENGTH'] = '2'
        req.environ['wsgi.input'] = io.BytesIO(b'{}')
        resp = req.get_response(app)
        self.assertIn('content-type header required when content-length',
                      resp.json['errors'][0]['detail'])

    def test_empty_path_needs_a_token_with_noauth2(self):
        app = self.make_app()
        req = webob.Request.blank('/placement', headers={})
        req.script_name, req.path_info = '/placement', ''
        self.assertEqual(401, req.get_response(app).status_int)
        req = webob.Request.blank('/placement',
                                  headers={'X-Auth-Token': 'admin'})
        req.script_name, req.path_info = '/placement', ''
        self.assertEqual(200, req.get_response(app).status_int)


class TestConcurrency(testtools.TestCase):
    """Concurrent writers on the test database (SQLite, or the server named
    by OSC_PLACEMENT_TEST_DB_URL): exactly one wins, the rest get 409."""

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        self.app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=db)
        resp = _request(self.app, 'POST', '/resource_providers',
                        '{"name": "raced"}')
        self.uuid = resp.json['uuid']

    def _race(self, method, path, bodies):
        statuses = []

        def writer(body):
            statuses.append(_request(self.app, method, path,
                                     body).status_int)
        threads = [threading.Thread(target=writer, args=(body,))
                   for body in bodies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sorted(statuses)

    def _generation(self):
        return _request(self.app, 'GET', '/resource_providers/' +
                        self.uuid).json['generation']

    def test_inventory_race(self):
        body = ('{"resource_provider_generation": 0, "inventories": '
                '{"VCPU": {"total": %d}, "DISK_GB": {"total": 9}}}')
        statuses = self._race(
            'PUT', '/resource_providers/%s/inventories' % self.uuid,
            [body % n for n in range(1, 7)])
        self.assertEqual([200] + [409] * 5, statuses)
        self.assertEqual(1, self._generation())

    def test_trait_race(self):
        body = ('{"resource_provider_generation": 0, "traits": '
                '["HW_CPU_X86_SSE%s"]}')
        statuses = self._race(
            'PUT', '/resource_providers/%s/traits' % self.uuid,
            [body % n for n in ('', '2', '3', '41', '42')])
        self.assertEqual([200] + [409] * 4, statuses)
        self.assertEqual(1, self._generation())

    def test_aggregate_race_creates_each_aggregate_once(self):
        agg = '"%s"' % uuidlib.uuid4()
        body = ('{"resource_provider_generation": 0, "aggregates": [%s]}'
                % agg)
        statuses = self._race(
            'PUT', '/resource_providers/%s/aggregates' % self.uuid,
            [body] * 5)
        self.assertEqual([200] + [409] * 4, statuses)

    def test_create_race_on_one_name(self):
        statuses = self._race('POST', '/resource_providers',
                              ['{"name": "same"}'] * 5)
        self.assertEqual([200] + [409] * 4, statuses)


class TestIdleConnections(testtools.TestCase):
    """A pooled connection that died while idle in the pool is replaced
    before use; one back in use within IDLE_PING_SECONDS is not pinged
    (the round trip a busy server saves)."""

    def setUp(self):
        super().setUp()
        api_fixtures.database()
        self.engine = db_engine.create_engine(api_fixtures._state['url'])
        self.addCleanup(self.engine.dispose)

    def _kill_pooled_connection(self):
        """Use a connection, return it to the pool, then close its
        driver connection behind the pool's back (as a restarted
        database would)."""
        with self.engine.connect() as conn:
            conn.execute(sa.text('SELECT 1'))
            raw = conn.connection.dbapi_connection
        raw.close()

    def _select_one(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.text('SELECT 1')).scalar()

    def test_idle_dead_connection_is_replaced(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.engine.IDLE_PING_SECONDS', 0))
        self._kill_pooled_connection()
        self.assertEqual(1, self._select_one())

    def test_recently_used_connection_is_not_pinged(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.engine.IDLE_PING_SECONDS', 3600))
        self._kill_pooled_connection()
        # No ping: the dead connection is handed out and the statement
        # fails; the pool then starts afresh.
        self.assertRaises(sa.exc.DBAPIError, self._select_one)
        self.assertEqual(1, self._select_one())


class TestReadsAndWrites(testtools.TestCase):
    """Reads may skip the transaction (PostgreSQL), but the connection
    they used must go back to the pool transactional: a write that fails
    after its first statement still leaves nothing behind."""

    def test_failed_write_after_reads_changes_nothing(self):
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        count = sa.select(sa.func.count()).select_from(tables.traits)
        # Every pooled connection serves a read first.
        for _ in range(3):
            with db.read() as conn:
                before = conn.execute(count).scalar()
        with testtools.ExpectedException(RuntimeError):
            with db.write() as conn:
                conn.execute(tables.traits.insert().values(
                    name='CUSTOM_NEVER_KEPT', created_at=tables.utcnow()))
                raise RuntimeError('the request fails after a write')
        with db.read() as conn:
            self.assertEqual(before, conn.execute(count).scalar())


class TestFailedWriteKeepsPreparedStatements(testtools.TestCase):
    """A failed write rolls back and leaves the connection as it was; on
    PostgreSQL that includes the statements the driver prepared on it,
    which psycopg's own rollback() would have deallocated."""

    def setUp(self):
        super().setUp()
        api_fixtures.database()
        # Its own pool: used one request at a time, it holds one
        # connection, so every step below runs on that one.
        self.db = db_engine.Database(db_engine.create_engine(
            api_fixtures._state['url']))
        self.addCleanup(self.db.engine.dispose)

    def _prepared_names(self, conn):
        if conn.dialect.name != 'postgresql':
            return set()
        return set(conn.execute(sa.text(
            'SELECT name FROM pg_prepared_statements')).scalars())

    def test_failed_write_keeps_prepared_statements(self):
        count = sa.select(sa.func.count()).select_from(tables.traits)
        # psycopg prepares a statement on its fifth execution.
        for _ in range(6):
            with self.db.read() as conn:
                before = conn.execute(count).scalar()
        with self.db.read() as conn:
            prepared = self._prepared_names(conn)
        with testtools.ExpectedException(RuntimeError):
            with self.db.write() as conn:
                conn.execute(tables.traits.insert().values(
                    name='CUSTOM_ROLLED_BACK', created_at=tables.utcnow()))
                raise RuntimeError('a 409 after the first write')
        with self.db.read() as conn:
            self.assertEqual(before, conn.execute(count).scalar())
            self.assertEqual(prepared, self._prepared_names(conn))
        if self.db.engine.dialect.name == 'postgresql':
            self.assertTrue(prepared)


class TestCommand(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable('XDG_DATA_HOME',
                                                     self.tmp))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_CONFIG_DIR', self.tmp))

    def _conf(self, *argv):
        return cmd.build_conf(cmd._parser().parse_args(list(argv)))

    def test_defaults(self):
        conf = self._conf()
        self.assertEqual('127.0.0.1', conf.server.host)
        self.assertEqual(8778, conf.server.port)
        self.assertEqual('noauth2', conf.api.auth_strategy)
        self.assertTrue(conf.placement_database.connection.startswith(
            'sqlite:///' + self.tmp))
        self.assertIsNone(cmd.check_auth_exposure(conf))

    def test_config_file_is_read_and_options_win(self):
        path = os.path.join(self.tmp, 'placement.conf')
        with open(path, 'w') as f:
            f.write('[api]\nauth_strategy = keystone\n'
                    '[placement_database]\nconnection = sqlite:///%s/x.db\n'
                    '[placement]\nmax_allocation_candidates = 7\n'
                    '[server]\nport = 9000\n' % self.tmp)
        conf = self._conf('--config-file', path, '--port', '9001')
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertEqual(7, conf.placement.max_allocation_candidates)
        self.assertEqual(9001, conf.server.port)
        self.assertIn('x.db', conf.placement_database.connection)

    def test_noauth_on_public_address_refused(self):
        conf = self._conf('--host', '0.0.0.0')
        self.assertIn('Refusing', cmd.check_auth_exposure(conf))
        self.assertEqual(cmd.EXIT_USAGE, cmd.serve(conf))
        conf = self._conf('--host', '0.0.0.0', '--insecure-noauth')
        self.assertIsNone(cmd.check_auth_exposure(conf))
        conf = self._conf('--host', '0.0.0.0', '--auth-strategy',
                          'keystone')
        self.assertIsNone(cmd.check_auth_exposure(conf))

    def test_loopback_detection(self):
        for host in ('127.0.0.1', '::1', 'localhost', '127.1.2.3'):
            self.assertTrue(cmd.is_loopback(host), host)
        for host in ('0.0.0.0', '10.0.0.1', 'example.com'):
            self.assertFalse(cmd.is_loopback(host), host)

    def test_db_sync_then_version(self):
        url = 'sqlite:///%s/sync.db' % self.tmp
        self.assertEqual(0, cmd.main(['--db-url', url, 'db', 'sync']))
        from osc_placement.server.db import engine
        eng = engine.create_engine(url)
        self.assertEqual(HEAD_REVISION, migration.current_version(eng))
        with eng.connect() as conn:
            count = conn.execute(sa.select(sa.func.count()).select_from(
                tables.traits)).scalar()
        self.assertGreater(count, 300)

    def test_usage_totals_migration_sums_existing_allocations(self):
        """A database written before usage_totals existed gets them
        from its allocations when upgraded."""
        url = 'sqlite:///%s/old.db' % self.tmp
        from osc_placement.server.db import engine
        eng = engine.create_engine(url)
        migration.upgrade(eng, '0001_initial')
        rows = [(1, 'a', 0, 2), (1, 'b', 0, 3), (1, 'a', 2, 10),
                (2, 'c', 0, 1)]
        with eng.begin() as conn:
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': rp, 'consumer_id': consumer,
                 'resource_class_id': rc, 'used': used}
                for rp, consumer, rc, used in rows])
        migration.upgrade(eng)
        totals = tables.usage_totals
        with eng.connect() as conn:
            got = set(conn.execute(sa.select(
                totals.c.resource_provider_id, totals.c.resource_class_id,
                totals.c.used)).all())
        self.assertEqual({(1, 0, 5), (1, 2, 10), (2, 0, 1)}, got)

    def test_usage_totals_rebuild_recounts_from_allocations(self):
        url = 'sqlite:///%s/rebuild.db' % self.tmp
        from osc_placement.server.db import engine
        from osc_placement.server.objects import usage_totals
        eng = engine.create_engine(url)
        migration.upgrade(eng)
        with eng.begin() as conn:
            # Rows written behind the totals' back, and a stale total.
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': 7, 'consumer_id': 'a',
                 'resource_class_id': 0, 'used': 4},
                {'resource_provider_id': 7, 'consumer_id': 'b',
                 'resource_class_id': 0, 'used': 2}])
            conn.execute(tables.usage_totals.insert(), [
                {'resource_provider_id': 9, 'resource_class_id': 1,
                 'used': 5}])
            usage_totals.rebuild(conn)
            got = set(conn.execute(sa.select(
                tables.usage_totals.c.resource_provider_id,
                tables.usage_totals.c.resource_class_id,
                tables.usage_totals.c.used)).all())
        self.assertEqual({(7, 0, 6)}, got)

    def test_unknown_command(self):
        self.assertRaises(SystemExit, cmd.main, ['db', 'pony'])


class TestKeystone(testtools.TestCase):

    def test_root_bypasses_auth_and_api_needs_a_token(self):
        conf = conf_mod.make_conf('sqlite://', auth_strategy='keystone')
        conf.set_override('www_authenticate_uri',
                          'http://keystone.example/identity',
                          'keystone_authtoken')
        app = app_mod.make_app(conf)
        self.assertEqual(200, webob.Request.blank('/').get_response(
            app).status_int)
        resp = webob.Request.blank('/resource_providers').get_response(app)
        self.assertEqual(401, resp.status_int)
        self.assertIn('keystone.example', resp.headers['WWW-Authenticate'])
        self.assertIn('x-openstack-request-id', resp.headers)
