# SPDX-License-Identifier: Apache-2.0
"""The alert rules and their test series use only the metrics of the
reference page (doc/source/server/monitoring.rst), with their labels.

The dashboard's queries are checked the same way in test_dashboard.
"""

import os

import fixtures
import testtools

from tests.monitoring import promql
from tests.monitoring import reference
from tests.monitoring import shipped

# Labels the rules make themselves.
RULE_LABELS = frozenset({'severity'})


def unknown_names(expr, metrics):
    """The series names of ``expr`` that no documented metric has."""
    return sorted(name for name in promql.usage(expr).metrics
                  if reference.metric_of_series(name, metrics) is None)


def unknown_labels(expr, metrics):
    return sorted(promql.usage(expr).labels
                  - reference.all_labels(metrics))


class TestReferencePage(testtools.TestCase):

    def test_page_lists_metrics_with_types(self):
        metrics = reference.documented_metrics()
        self.assertIn('openstack_placement_resource_total', metrics)
        self.assertEqual('histogram', metrics[
            'placement_http_request_duration_seconds'].type)
        self.assertEqual({'hostname', 'resourcetype'}, metrics[
            'openstack_placement_resource_usage'].labels)
        self.assertEqual(frozenset(), metrics[
            'placement_resource_providers'].labels)

    def test_counters_end_in_total(self):
        # prometheus_client serves a counter under its name with _total;
        # the reference gives the served name. (Gauges may end in _total
        # too: openstack-exporter's openstack_placement_resource_total.)
        for metric in reference.documented_metrics().values():
            if metric.type == 'counter':
                self.assertTrue(metric.name.endswith('_total'), metric)

    def test_entry_without_type_is_an_error(self):
        # An entry the reader cannot parse must not drop out silently,
        # or a name could leave the checks.
        with open(reference.PAGE) as f:
            text = f.read()
        entry = '``placement_resource_providers``\n    Gauge; no labels.'
        self.assertIn(entry, text)
        page = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'monitoring.rst')
        with open(page, 'w') as f:
            f.write(text.replace(entry, entry.replace(
                'Gauge; no labels.', 'How many providers.')))
        error = self.assertRaises(ValueError,
                                  reference.documented_metrics, page)
        self.assertIn('placement_resource_providers', str(error))

    def test_histogram_series_names(self):
        metrics = reference.documented_metrics()
        histogram = 'placement_http_request_duration_seconds'
        for suffix in ('_bucket', '_sum', '_count'):
            self.assertEqual(histogram, reference.metric_of_series(
                histogram + suffix, metrics).name)
        # Its bare name is no series; a counter has no _bucket.
        self.assertIsNone(reference.metric_of_series(histogram, metrics))
        self.assertIsNone(reference.metric_of_series(
            'placement_conflicts_total_bucket', metrics))
        self.assertIn('le', reference.labels_of_series(
            histogram + '_bucket', metrics))
        self.assertNotIn('le', reference.labels_of_series(
            histogram + '_count', metrics))


class TestRulesUseDocumentedMetrics(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.metrics = reference.documented_metrics()
        self.rules = shipped.load_yaml(shipped.RULES)

    def test_rule_expressions(self):
        for group in self.rules['groups']:
            for rule in group['rules']:
                name = rule.get('alert') or rule.get('record')
                self.assertTrue(promql.usage(rule['expr']).metrics, name)
                self.assertEqual(
                    [], unknown_names(rule['expr'], self.metrics), name)
                self.assertEqual(
                    [], unknown_labels(rule['expr'], self.metrics), name)

    def test_annotation_labels(self):
        known = reference.all_labels(self.metrics)
        for rule in shipped.alerts(self.rules):
            for text in rule['annotations'].values():
                for label in shipped.template_labels(text):
                    self.assertIn(label, known, rule['alert'])

    def test_rule_test_series(self):
        tests = shipped.load_yaml(shipped.RULE_TESTS)
        for test in tests['tests']:
            for item in test['input_series']:
                name, labels = shipped.series_name_and_labels(
                    item['series'])
                self.assertIsNotNone(
                    reference.metric_of_series(name, self.metrics), name)
                self.assertEqual(
                    set(), labels - reference.labels_of_series(
                        name, self.metrics), item['series'])
            for case in test.get('alert_rule_test', []):
                for alert in case.get('exp_alerts') or []:
                    self.assertEqual(
                        set(), set(alert['exp_labels'])
                        - reference.all_labels(self.metrics)
                        - RULE_LABELS, case['alertname'])

    def test_unknown_name_is_found(self):
        # The check itself: a misspelt metric is caught.
        self.assertEqual(
            ['placement_cloud_resource_capacty'],
            unknown_names('sum by (resourcetype) '
                          '(placement_cloud_resource_capacty) > 0',
                          self.metrics))
        self.assertEqual(['host'], unknown_labels(
            'max by (host) (openstack_placement_resource_usage)',
            self.metrics))
