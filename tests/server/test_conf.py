# SPDX-License-Identifier: Apache-2.0
"""placement.conf as upstream reads it (server/conf.py): every option
upstream 16.0.0 registers, with its default; upstream's semantics when a
file is given; libraries' options registered as the libraries register
them, also on a ConfigOpts shared with other oslo users; the oslo.config
and oslo.policy entry points."""

import json
import os
import subprocess
import sys
import time

import fixtures
from oslo_config import cfg
from oslo_policy import opts as policy_opts
import sqlalchemy as sa
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import cmd
from osc_placement.server import conf as conf_mod
from osc_placement.server import health
from osc_placement.server import policy
from tests.server import fixtures as server_fixtures

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM_OPTIONS = os.path.join(HERE, 'data',
                                'upstream-16.0.0-options.json')
# Defaults that depend on where the code is installed, or that upstream
# itself changes when it sets up logging.
INSTALL_DEPENDENT = {('DEFAULT', 'pybasedir'),
                     ('DEFAULT', 'default_log_levels')}
BIN = os.path.dirname(sys.executable)


def _upstream_options():
    with open(UPSTREAM_OPTIONS) as f:
        return json.load(f)


def _default(conf, group, name):
    opts = conf._opts if group == 'DEFAULT' else conf._groups[group]._opts
    return opts[name]['opt'].default


def _register(conf):
    """The server's options on ``conf``, as another oslo user (upstream's
    PlacementFixture, Nova) would register them on its own ConfigOpts."""
    conf_mod.register_opts(conf)
    conf.set_override('connection', 'sqlite://', 'placement_database')
    return conf


def _read(conf):
    conf([], default_config_files=[])
    return conf


class TestUpstreamOptions(testtools.TestCase):

    def test_every_upstream_option_with_its_default(self):
        conf = conf_mod.new_conf()
        upstream = _upstream_options()
        self.assertGreater(len(upstream), 70)
        for option in upstream:
            group, name = option['group'], option['name']
            try:
                ours = _default(conf, group, name)
            except KeyError:
                self.fail('[%s] %s is not registered' % (group, name))
            if (group, name) in INSTALL_DEPENDENT:
                continue
            if isinstance(ours, (list, tuple)):
                ours = list(ours)
            self.assertEqual(option['default'], ours,
                             '[%s] %s' % (group, name))

    def test_sample_config_carries_the_library_defaults_changed(self):
        # The oslo.config.opts.defaults entry point, as upstream's.
        out = subprocess.run(
            [os.path.join(BIN, 'oslo-config-generator'), '--namespace',
             'placement.conf', '--namespace', 'oslo.middleware.cors'],
            capture_output=True, text=True, check=True)
        self.assertIn('#allow_methods = GET,PUT,POST,DELETE,PATCH',
                      out.stdout)

    def test_sample_config_generates(self):
        out = subprocess.run(
            [os.path.join(BIN, 'oslo-config-generator'), '--namespace',
             'placement.conf'], capture_output=True, text=True, check=True)
        for line in ('[api]', '#auth_strategy = keystone',
                     '[placement_database]', '#connection = <None>',
                     '#max_allocation_candidates = -1'):
            self.assertIn(line, out.stdout)


class TestFileSemantics(testtools.TestCase):
    """A file given means upstream's defaults."""

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def _file(self, text):
        path = os.path.join(self.tmp, 'placement.conf')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_file_without_auth_strategy_means_keystone(self):
        path = self._file('[placement_database]\nconnection = sqlite://\n')
        conf = conf_mod.load(['--config-file', path])
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertFalse(conf.placement_database.sync_on_startup)
        # The placement-server command reads it the same way.
        conf = cmd.build_conf(cmd._parser().parse_args(
            ['--config-file', path]))
        self.assertEqual('keystone', conf.api.auth_strategy)

    def test_file_without_connection_is_an_error(self):
        path = self._file('[api]\nauth_strategy = noauth2\n')
        self.assertRaises(cfg.RequiredOptError, conf_mod.load,
                          ['--config-file', path])
        err = self.assertRaises(SystemExit, cmd.main,
                                ['--config-file', path])
        self.assertEqual(cmd.EXIT_USAGE, err.code)

    def test_config_dir_environment_as_upstream(self):
        self.assertIsNone(conf_mod.config_files({}))
        self.assertEqual([os.path.join(self.tmp, 'placement.conf')],
                         conf_mod.config_files(
                             {'OS_PLACEMENT_CONFIG_DIR': self.tmp}))

    def test_config_dir_option(self):
        conf_dir = os.path.join(self.tmp, 'conf.d')
        os.mkdir(conf_dir)
        with open(os.path.join(conf_dir, 'db.conf'), 'w') as f:
            f.write('[placement_database]\nconnection = sqlite://\n'
                    'max_pool_size = 3\n')
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_CONFIG_DIR', self.tmp))
        conf = cmd.build_conf(cmd._parser().parse_args(
            ['--config-dir', conf_dir]))
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertEqual(3, conf.placement_database.max_pool_size)

    def test_pool_options_reach_the_engine(self):
        from osc_placement.server.db import engine
        conf = conf_mod.make_conf('sqlite:///' + self.tmp + '/p.db')
        eng = engine.create_engine('postgresql+psycopg://u@h/db',
                                   conf.placement_database)
        # Unset: SQLAlchemy's defaults, as under oslo.db.
        self.assertEqual(5, eng.pool.size())
        self.assertEqual(10, eng.pool._max_overflow)
        conf.set_override('max_pool_size', 7, 'placement_database')
        conf.set_override('max_overflow', 2, 'placement_database')
        conf.set_override('pool_timeout', 4, 'placement_database')
        conf.set_override('connection_parameters', 'connect_timeout=3',
                          'placement_database')
        eng = engine.create_engine('postgresql+psycopg://u@h/db',
                                   conf.placement_database)
        self.assertEqual(7, eng.pool.size())
        self.assertEqual(2, eng.pool._max_overflow)
        self.assertEqual(4, eng.pool._timeout)
        self.assertEqual('3', eng.url.query['connect_timeout'])


class TestDatabaseAtStart(testtools.TestCase):
    """[placement_database] max_retries and retry_interval: a service
    waits for a database still coming up (oslo.db's behaviour)."""

    def _wait(self, url, **options):
        from osc_placement.server.db import engine
        conf = conf_mod.make_conf(url)
        for name, value in options.items():
            conf.set_override(name, value, 'placement_database')
        eng = engine.create_engine(url, conf.placement_database)
        self.addCleanup(eng.dispose)
        started = time.monotonic()
        self.assertRaises(sa.exc.OperationalError, engine.wait_for_database,
                          eng, conf.placement_database)
        return time.monotonic() - started

    def test_unreachable_server_is_retried(self):
        # Nothing listens on port 1: refused at once, each attempt.
        elapsed = self._wait('postgresql+psycopg://u@127.0.0.1:1/db',
                             max_retries=2, retry_interval=1)
        self.assertGreaterEqual(elapsed, 2)

    def test_sqlite_file_that_cannot_open_fails_at_once(self):
        elapsed = self._wait('sqlite:////nonexistent/dir/p.db',
                             max_retries=5, retry_interval=10)
        self.assertLess(elapsed, 5)


class TestLibraryOptionsAsRegistered(testtools.TestCase):
    """What upstream's PlacementFixture does to the options on the same
    ConfigOpts must work: with copies registered it raised
    DuplicateOptError."""

    def test_policy_defaults_changed_as_upstreams_fixture_does(self):
        """Upstream's PlacementFixture (and Nova) call oslo.policy's
        set_defaults on the ConfigOpts the server's options are on; the
        enforcer then registers the library's options again. Copies of
        them registered by register_opts made that a DuplicateOptError."""
        conf = _register(cfg.ConfigOpts())
        before = _default(conf, 'oslo_policy', 'enforce_new_defaults')
        self.addCleanup(policy_opts.set_defaults, conf,
                        enforce_new_defaults=before)
        policy_opts.set_defaults(conf, enforce_new_defaults=not before)
        enforcer = policy.make_enforcer(_read(conf))
        self.assertIs(not before, conf.oslo_policy.enforce_new_defaults)
        self.assertIsNotNone(enforcer)

    def test_registering_twice_is_harmless(self):
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf = _read(_register(conf))
        self.assertEqual('keystone', conf.api.auth_strategy)

    def test_policy_set_defaults_then_serve(self):
        conf = conf_mod.make_conf(server_fixtures.database() and
                                  server_fixtures._state['url'],
                                  sync_on_startup=False)
        # set_defaults changes the library's option objects for the
        # whole process: put the default back afterwards.
        before = _default(conf, 'oslo_policy', 'enforce_new_defaults')
        self.addCleanup(policy_opts.set_defaults, conf,
                        enforce_new_defaults=before)
        policy_opts.set_defaults(conf, enforce_new_defaults=False)
        self.assertFalse(conf.oslo_policy.enforce_new_defaults)
        app = app_mod.make_app(conf)
        # A legacy admin (no scope) passes under the old defaults.
        resp = webob.Request.blank(
            '/resource_providers',
            headers={'X-Auth-Token': 'admin',
                     'OpenStack-API-Version': 'placement 1.39'}
        ).get_response(app)
        self.assertEqual(200, resp.status_int)


class TestPolicyEntryPoints(testtools.TestCase):

    def _run(self, *argv, env=None):
        return subprocess.run([os.path.join(BIN, argv[0])] + list(argv[1:]),
                              capture_output=True, text=True, check=True,
                              cwd=self.useFixture(fixtures.TempDir()).path,
                              env=dict(os.environ, **(env or {})))

    def _conf(self, policy):
        path = os.path.join(os.path.dirname(policy), 'placement.conf')
        with open(path, 'w') as f:
            f.write('[oslo_policy]\npolicy_file = %s\n' % policy)
        return path

    def test_sample_generator(self):
        out = self._run('oslopolicy-sample-generator', '--namespace',
                        'placement')
        self.assertIn('"placement:resource_providers:list"', out.stdout)

    def test_checker_and_upgrade(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        policy = os.path.join(tmp, 'policy.yaml')
        with open(policy, 'w') as f:
            f.write('"placement:resource_providers:list": "role:admin"\n')
        token = os.path.join(tmp, 'token.json')
        with open(token, 'w') as f:
            json.dump({'token': {'roles': [{'name': 'admin'}],
                                 'project': {'id': 'p'},
                                 'user': {'id': 'u'}}}, f)
        out = self._run('oslopolicy-checker',
                        '--policy', policy, '--access', token,
                        '--rule', 'placement:resource_providers:list')
        self.assertIn('passed: placement:resource_providers:list',
                      out.stdout)
        out = self._run('oslopolicy-policy-upgrade', '--namespace',
                        'placement', '--policy', policy)
        self.assertIn('placement:resource_providers:list', out.stdout)
        # The enforcer entry point: the effective policy, file over code.
        conf_dir = os.path.dirname(self._conf(policy))
        out = self._run('oslopolicy-policy-generator', '--namespace',
                        'placement',
                        env={'OS_PLACEMENT_CONFIG_DIR': conf_dir})
        self.assertIn('"placement:resource_providers:list": "role:admin"',
                      out.stdout)
        self.assertIn('"placement:traits:list"', out.stdout)


class TestLibraryGroups(testtools.TestCase):

    def test_healthcheck_checks_the_database_by_default(self):
        healthcheck = _read(_register(cfg.ConfigOpts())).healthcheck
        self.assertEqual(['placement_database'], healthcheck.backends)
        self.assertFalse(healthcheck.detailed)
        self.assertEqual(0.5, healthcheck.database_timeout)
        self.assertIn(('healthcheck', health.OPTS),
                      [(group, opts) for group, opts in
                       conf_mod.list_opts()])

    def test_profiler_options_are_osprofilers(self):
        from osprofiler import opts as osprofiler_opts
        conf = _read(_register(cfg.ConfigOpts()))
        for opt in osprofiler_opts.list_opts()[0][1]:
            self.assertEqual(opt.default, conf.profiler[opt.dest])
