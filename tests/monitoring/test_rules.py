# SPDX-License-Identifier: Apache-2.0
"""The shipped alert rules, checked by promtool and by their unit tests.

promtool parses the rule file and runs its unit tests
(etc/prometheus/placement-rules.test.yaml). Those tests prove something
only if they can fail, so each alert is also broken in a copy of the
rules three ways -- it never fires, it fires whatever the threshold, it
fires without waiting its "for:" -- and its tests must then fail.
"""

import os
import re
import shutil
import subprocess
import tempfile

import testtools
import yaml

from tests.monitoring import prometheus_run
from tests.monitoring import shipped

PROMTOOL_TIMEOUT = 60


def promtool(*argv, cwd=None):
    """(exit status, output) of a promtool command."""
    result = subprocess.run(
        [prometheus_run.executable('promtool')] + list(argv), cwd=cwd,
        capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT)
    return result.returncode, result.stdout + result.stderr


def never_fires(rule):
    rule['expr'] = 'vector(0) > 1'


def passes_every_threshold(rule):
    # Every comparison with a number lets every sample through.
    rule['expr'] = re.sub(r'([<>])=?\s*[0-9][0-9.]*',
                          lambda m: '> -Inf' if m.group(1) == '>'
                          else '< +Inf', rule['expr'])


def fires_at_once(rule):
    rule['for'] = '0s'


MUTATIONS = (never_fires, passes_every_threshold, fires_at_once)


class TestRules(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.rules = shipped.load_yaml(shipped.RULES)
        self.rule_tests = shipped.load_yaml(shipped.RULE_TESTS)

    def test_promtool_checks_rule_file(self):
        status, output = promtool('check', 'rules', shipped.RULES)
        self.assertEqual(0, status, output)
        self.assertIn('SUCCESS', output)

    def test_unit_tests_pass(self):
        status, output = promtool('test', 'rules', shipped.RULE_TESTS,
                                  cwd=shipped.RULES_DIR)
        self.assertEqual(0, status, output)

    def test_every_alert_is_tested_firing_and_not_firing(self):
        tested = {}
        for test in self.rule_tests['tests']:
            for case in test.get('alert_rule_test', []):
                fires = bool(case.get('exp_alerts'))
                tested.setdefault(case['alertname'], set()).add(fires)
        for rule in shipped.alerts(self.rules):
            self.assertEqual({True, False}, tested.get(rule['alert']),
                             '%s: a test where it fires and one where it '
                             'does not' % rule['alert'])

    def test_every_alert_has_severity_summary_and_description(self):
        for rule in shipped.alerts(self.rules):
            self.assertIn(rule['labels'].get('severity'),
                          ('warning', 'critical'), rule['alert'])
            self.assertEqual({'summary', 'description'},
                             set(rule['annotations']), rule['alert'])
            self.assertIn('for', rule, rule['alert'])

    def test_unit_tests_fail_when_an_alert_is_broken(self):
        survivors = []
        for rule in shipped.alerts(self.rules):
            for mutation in MUTATIONS:
                status, output = self._test_mutant(rule['alert'], mutation)
                # A failure elsewhere (a file promtool cannot read) would
                # not show that this alert's tests caught the change.
                caught = status != 0 and (
                    'alertname: %s,' % rule['alert'] in output)
                if not caught:
                    survivors.append('%s %s: %s' % (
                        rule['alert'], mutation.__name__, output[-500:]))
        self.assertEqual([], survivors)

    def _test_mutant(self, alert, mutation):
        """promtool test rules on a copy of the rules where ``alert`` went
        through ``mutation``."""
        mutant = yaml.safe_load(yaml.safe_dump(self.rules))
        for rule in shipped.alerts(mutant):
            if rule['alert'] == alert:
                mutation(rule)
        directory = tempfile.mkdtemp(prefix='placement-rules-')
        self.addCleanup(shutil.rmtree, directory)
        with open(os.path.join(directory, os.path.basename(shipped.RULES)),
                  'w') as f:
            yaml.safe_dump(mutant, f)
        shutil.copy(shipped.RULE_TESTS, directory)
        return promtool('test', 'rules',
                        os.path.basename(shipped.RULE_TESTS), cwd=directory)
