# SPDX-License-Identifier: Apache-2.0
"""The ``python -m osc_placement.server`` command line (server/cmd.py)."""

import os

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server import cmd
from osc_placement.server.db import migration
from osc_placement.server.db import tables
from tests.server.test_migration import HEAD_REVISION


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

    def test_tokenless_admin_is_off_unless_asked_for(self):
        self.assertFalse(self._conf().api.noauth_admin_without_token)
        conf = self._conf('--noauth-admin-without-token')
        self.assertTrue(conf.api.noauth_admin_without_token)
        self.assertIsNone(cmd.check_auth_exposure(conf))

    def test_tokenless_admin_refused_as_noauth2_is(self):
        conf = self._conf('--host', '0.0.0.0',
                          '--noauth-admin-without-token')
        problem = cmd.check_auth_exposure(conf)
        self.assertIn('Refusing', problem)
        self.assertIn('without a token served as admin', problem)
        self.assertEqual(cmd.EXIT_USAGE, cmd.serve(conf))
        conf = self._conf('--host', '0.0.0.0', '--insecure-noauth',
                          '--noauth-admin-without-token')
        self.assertIsNone(cmd.check_auth_exposure(conf))

    def test_tokenless_admin_refused_with_keystone(self):
        path = os.path.join(self.tmp, 'placement.conf')
        with open(path, 'w') as f:
            f.write('[api]\nnoauth_admin_without_token = true\n'
                    '[placement_database]\nconnection = sqlite://\n')
        conf = self._conf('--config-file', path)
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertIn('needs --auth-strategy noauth2',
                      cmd.check_auth_exposure(conf))
        self.assertEqual(cmd.EXIT_USAGE, cmd.serve(conf))

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

    def test_unknown_command(self):
        self.assertRaises(SystemExit, cmd.main, ['db', 'pony'])

    def test_serve_refused_on_a_database_not_taken_over(self):
        """Without sync_on_startup, a database lacking this server's
        additions (an upstream one, or one handed back) is refused with
        the reason, rather than served with 500s."""
        url = 'sqlite:///%s/handed-back.db' % self.tmp
        self.assertEqual(0, cmd.main(['--db-url', url, 'db', 'sync']))
        self.assertEqual(0, cmd.main(['--db-url', url, 'db', 'hand-back']))
        path = os.path.join(self.tmp, 'placement.conf')
        with open(path, 'w') as f:
            f.write('[api]\nauth_strategy = noauth2\n'
                    '[placement_database]\nconnection = %s\n'
                    'sync_on_startup = False\n' % url)
        stderr = self.useFixture(fixtures.StringStream('stderr')).stream
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', stderr))
        self.assertEqual(cmd.EXIT_SERVE_FAILED,
                         cmd.main(['--config-file', path]))
        stderr.seek(0)
        self.assertIn('run "placement-manage db sync" first', stderr.read())
