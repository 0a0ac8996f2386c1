# SPDX-License-Identifier: Apache-2.0
"""``placement-manage`` and ``placement-status`` (server/manage.py,
server/status.py) as processes, on SQLite or a fresh database on the
server OSC_PLACEMENT_TEST_DB_URL names: upstream 16.0.0's sub-commands,
output and exit codes (tools/compare-upstream-commands.sh runs both side
by side)."""

import os
import subprocess
import sys
import uuid

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server.db import tables
from tests.server.test_migration import HEAD_REVISION
from tests.server import test_process

BIN = os.path.dirname(sys.executable)
NIL = '00000000-0000-0000-0000-000000000000'


class _Commands(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.connection = test_process._database_url(self.tmp)
        self.conf = self.write_conf('')
        self.home = os.path.join(self.tmp, 'home')
        os.mkdir(self.home)

    def write_conf(self, extra, name='placement.conf'):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write('[placement_database]\nconnection = %s\n%s'
                    % (self.connection, extra))
        return path

    def run_command(self, command, *argv, conf=None):
        args = [os.path.join(BIN, command)]
        if conf is not False:
            args += ['--config-file', conf or self.conf]
        return subprocess.run(
            args + list(argv), capture_output=True, text=True,
            # oslo.config also looks for placement.conf in $HOME.
            cwd=self.tmp, env=dict(os.environ, HOME=self.home),
            timeout=120)

    def manage(self, *argv, **kwargs):
        return self.run_command('placement-manage', *argv, **kwargs)

    def status(self, *argv, **kwargs):
        return self.run_command('placement-status', 'upgrade', 'check',
                                *argv, **kwargs)

    def engine(self):
        engine = sa.create_engine(self.connection)
        self.addCleanup(engine.dispose)
        return engine


class TestPlacementManage(_Commands):

    def test_without_connection(self):
        result = self.manage('db', 'version', conf=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('value required for option connection in group '
                      '[placement_database]', result.stderr)

    def test_sync_version_stamp(self):
        result = self.manage('db', 'version')
        self.assertEqual((0, 'None\n'), (result.returncode, result.stdout))
        self.assertEqual(0, self.manage('db', 'sync').returncode)
        result = self.manage('db', 'version')
        self.assertEqual(HEAD_REVISION + '\n', result.stdout)
        self.assertEqual(0, self.manage('db', 'stamp',
                                        '422ece571366').returncode)
        self.assertEqual('422ece571366\n',
                         self.manage('db', 'version').stdout)
        result = self.manage('db', 'stamp', 'pony')
        self.assertEqual(1, result.returncode)
        self.assertIn("Can't locate revision identified by 'pony'",
                      result.stderr)
        self.assertEqual(2, self.manage('db', 'stamp').returncode)
        self.assertEqual(0, self.manage('db', 'stamp', 'head').returncode)
        self.assertEqual(HEAD_REVISION + '\n',
                         self.manage('db', 'version').stdout)

    def test_db_alone_prints_its_help(self):
        result = self.manage('db')
        self.assertEqual(0, result.returncode)
        self.assertIn('{sync,version,stamp,online_data_migrations}',
                      result.stdout)

    def test_online_data_migrations_nothing_to_do(self):
        self.assertEqual(0, self.manage('db', 'sync').returncode)
        result = self.manage('db', 'online_data_migrations')
        self.assertEqual(0, result.returncode)
        self.assertIn('Running batches of 50 until complete', result.stdout)
        self.assertIn('|    set_root_provider_ids    |      0      |     0'
                      '     |', result.stdout)
        for bad in ('0', '-3', 'pony'):
            result = self.manage('db', 'online_data_migrations',
                                 '--max-count', bad)
            self.assertEqual(127, result.returncode)
            self.assertEqual('Must supply a positive value for max_count\n',
                             result.stdout)


class TestOldData(_Commands):
    """A database as Placement before Queens and Rocky left it: a
    provider without a root, allocations without a consumer."""

    def setUp(self):
        super().setUp()
        self.assertEqual(0, self.manage('db', 'sync').returncode)
        engine = self.engine()
        self.consumers = sorted(str(uuid.uuid4()) for _ in range(2))
        with engine.begin() as conn:
            for n in range(3):
                conn.execute(tables.resource_providers.insert().values(
                    uuid=str(uuid.uuid4()), name='old-%d' % n,
                    generation=0))
            provider = conn.execute(sa.select(
                sa.func.min(tables.resource_providers.c.id))).scalar()
            for consumer in self.consumers:
                conn.execute(tables.allocations.insert().values(
                    resource_provider_id=provider, consumer_id=consumer,
                    resource_class_id=0, used=1))

    def test_status_then_migrations_then_status(self):
        result = self.status()
        self.assertEqual(2, result.returncode)  # a failure outranks
        self.assertIn('| Result: Failure', result.stdout)
        self.assertIn('There are 2 incomplete consumers', result.stdout)

        result = self.manage('db', 'online_data_migrations',
                             '--max-count', '2')
        self.assertEqual(1, result.returncode, result.stdout)
        self.assertIn('2 rows matched query set_root_provider_ids, 2 '
                      'migrated', result.stdout)

        result = self.manage('db', 'online_data_migrations')
        self.assertEqual(0, result.returncode, result.stdout)
        self.assertIn('1 rows matched query set_root_provider_ids, 1 '
                      'migrated', result.stdout)
        self.assertIn('2 rows matched query create_incomplete_consumers, '
                      '2 migrated', result.stdout)

        self.assertEqual(0, self.status().returncode)
        with self.engine().connect() as conn:
            rows = conn.execute(
                sa.select(tables.consumers.c.uuid,
                          tables.projects.c.external_id)
                .join(tables.projects,
                      tables.projects.c.id == tables.consumers.c.project_id)
                .order_by(tables.consumers.c.uuid)).all()
            roots = conn.execute(sa.select(sa.func.count()).where(
                tables.resource_providers.c.root_provider_id
                == tables.resource_providers.c.id)).scalar()
        self.assertEqual([(c, NIL) for c in self.consumers],
                         [tuple(r) for r in rows])
        self.assertEqual(3, roots)

    def test_incomplete_consumers_alone_is_a_warning(self):
        with self.engine().begin() as conn:
            conn.execute(tables.resource_providers.update().values(
                root_provider_id=tables.resource_providers.c.id))
        result = self.status()
        self.assertEqual(1, result.returncode, result.stdout)
        self.assertIn('| Result: Warning', result.stdout)


class TestPlacementStatus(_Commands):

    def test_success(self):
        self.assertEqual(0, self.manage('db', 'sync').returncode)
        result = self.status()
        self.assertEqual(0, result.returncode, result.stdout)
        for check in ('Missing Root Provider IDs', 'Incomplete Consumers',
                      'Policy File JSON to YAML Migration'):
            self.assertIn('| Check: %s' % check, result.stdout)

    def test_json_policy_file_fails(self):
        self.assertEqual(0, self.manage('db', 'sync').returncode)
        policy = os.path.join(self.tmp, 'policy.json')
        with open(policy, 'w') as f:
            f.write('{}')
        conf = self.write_conf('[oslo_policy]\npolicy_file = %s\n' % policy,
                               'json.conf')
        result = self.status(conf=conf)
        self.assertEqual(2, result.returncode)
        self.assertIn('Your policy file is JSON-formatted', result.stdout)

    def test_without_connection(self):
        result = self.status(conf=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('value required for option connection',
                      result.stderr)
