# SPDX-License-Identifier: Apache-2.0
"""osc_placement.server.conf: the server's options on a ConfigOpts shared
with other oslo users."""

from oslo_config import cfg
from oslo_policy import opts as policy_opts
import testtools

from osc_placement.server import conf as placement_conf
from osc_placement.server import health
from osc_placement.server import policy


class SharedConfigOptsTest(testtools.TestCase):

    def test_policy_defaults_changed_as_upstreams_fixture_does(self):
        """Upstream's PlacementFixture (and Nova) call oslo.policy's
        set_defaults on the ConfigOpts the server's options are on; the
        enforcer then registers the library's options again. Copies of
        them registered by register_opts made that a DuplicateOptError."""
        before = next(opt.default for opt in policy_opts._options
                      if opt.name == 'enforce_new_defaults')
        self.addCleanup(policy_opts.set_defaults, cfg.ConfigOpts(),
                        enforce_new_defaults=before)
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        policy_opts.set_defaults(conf, enforce_new_defaults=not before)
        conf.set_override('connection', 'sqlite://', 'placement_database')
        conf([], default_config_files=[])
        enforcer = policy.make_enforcer(conf)
        self.assertIs(not before, conf.oslo_policy.enforce_new_defaults)
        self.assertIsNotNone(enforcer)

    def test_registering_twice_is_harmless(self):
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        placement_conf.register_opts(conf)
        conf.set_override('connection', 'sqlite://', 'placement_database')
        conf([], default_config_files=[])
        self.assertEqual('keystone', conf.api.auth_strategy)


class LibraryGroupsTest(testtools.TestCase):

    def conf(self):
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        conf.set_override('connection', 'sqlite://', 'placement_database')
        conf([], default_config_files=[])
        return conf

    def test_healthcheck_checks_the_database_by_default(self):
        healthcheck = self.conf().healthcheck
        self.assertEqual(['placement_database'], healthcheck.backends)
        self.assertFalse(healthcheck.detailed)
        self.assertEqual(0.5, healthcheck.database_timeout)
        self.assertIn(('healthcheck', health.OPTS),
                      [(group, opts) for group, opts in
                       placement_conf.list_opts()])

    def test_profiler_options_are_osprofilers(self):
        from osprofiler import opts as osprofiler_opts
        conf = self.conf()
        for opt in osprofiler_opts.list_opts()[0][1]:
            self.assertEqual(opt.default, conf.profiler[opt.dest])
