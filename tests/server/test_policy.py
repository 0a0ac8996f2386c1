# SPDX-License-Identifier: Apache-2.0
"""The policy rules, their defaults and the policy file (server/policy.py)."""

import os

import fixtures
from oslo_policy import policy as oslo_policy
import testtools

from osc_placement.server import conf as conf_mod
from osc_placement.server import errors
from osc_placement.server import policy


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
