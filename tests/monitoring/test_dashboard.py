# SPDX-License-Identifier: Apache-2.0
"""The shipped Grafana dashboard: it loads, queries the data source its
variable names, and every query parses (promtool, as recording rules)
and uses only the metrics and labels of the reference page."""

import json
import os
import re

import fixtures
import testtools
import yaml

from tests.monitoring import promql
from tests.monitoring import reference
from tests.monitoring import shipped
from tests.monitoring import test_rules

DATASOURCE = {'type': 'prometheus', 'uid': '${DS_PROMETHEUS}'}
# Grafana's own variables, and what stands for them when promtool parses
# a query.
BUILTINS = {'__rate_interval': '5m', '__interval': '1m', '__range': '1h'}
_VARIABLE = re.compile(r'\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]')
_LABEL_VALUES = re.compile(r'^label_values\((?:(.*),\s*)?(\w+)\)$', re.S)
_LEGEND_LABEL = re.compile(r'\{\{\s*(\w+)\s*\}\}')
GRID_WIDTH = 24


def panels(dashboard):
    """Every panel, those inside collapsed rows too, rows excluded."""
    for panel in dashboard['panels']:
        if panel['type'] == 'row':
            yield from panel.get('panels', [])
        else:
            yield panel


def queries(dashboard):
    """[(where, PromQL)] of every panel target and variable query."""
    found = []
    for panel in panels(dashboard):
        for target in panel.get('targets', []):
            found.append(('panel %s %s' % (panel['id'], target['refId']),
                          target.get('expr', '')))
    for variable in dashboard['templating']['list']:
        if variable['type'] == 'query':
            selector = _LABEL_VALUES.match(variable['query']['query'])
            found.append(('variable %s' % variable['name'],
                          selector.group(1) if selector else None))
    return found


def variables_used(expr):
    return {next(filter(None, groups))
            for groups in _VARIABLE.findall(expr)}


def substitute_variables(expr):
    """The query as Grafana would send it, near enough for parsing."""
    def value(match):
        name = next(filter(None, match.groups()))
        return BUILTINS.get(name, 'x')
    return _VARIABLE.sub(value, expr)


def promtool_parse(exprs, directory):
    """(status, output) of promtool checking ``exprs`` as recording
    rules: promtool has no offline query parser, but parses rules."""
    rules = {'groups': [{'name': 'dashboard', 'rules': [
        {'record': 'dashboard:query_%d' % i,
         'expr': substitute_variables(expr)}
        for i, expr in enumerate(exprs)]}]}
    path = os.path.join(directory, 'dashboard-queries.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump(rules, f)
    return test_rules.promtool('check', 'rules', path)


class TestDashboard(testtools.TestCase):

    def setUp(self):
        super().setUp()
        with open(shipped.DASHBOARD) as f:
            self.dashboard = json.load(f)
        self.metrics = reference.documented_metrics()
        self.variables = {variable['name'] for variable
                          in self.dashboard['templating']['list']}

    def test_data_source_is_a_variable(self):
        variable, = [v for v in self.dashboard['templating']['list']
                     if v['name'] == 'DS_PROMETHEUS']
        self.assertEqual(('datasource', 'prometheus'),
                         (variable['type'], variable['query']))
        for panel in panels(self.dashboard):
            self.assertEqual(DATASOURCE, panel['datasource'], panel['id'])
            for target in panel['targets']:
                self.assertEqual(DATASOURCE, target['datasource'],
                                 panel['id'])
        for variable in self.dashboard['templating']['list']:
            if variable['type'] == 'query':
                self.assertEqual(DATASOURCE, variable['datasource'])

    def test_every_panel_has_queries(self):
        for panel in panels(self.dashboard):
            self.assertTrue(panel['title'], panel['id'])
            self.assertTrue(panel['targets'], panel['title'])
            refs = [target['refId'] for target in panel['targets']]
            self.assertEqual(len(refs), len(set(refs)), panel['title'])
            for target in panel['targets']:
                self.assertTrue(target['expr'].strip(), panel['title'])

    def test_panels_fit_the_grid_without_overlapping(self):
        ids = [panel['id'] for panel in self.dashboard['panels']]
        ids += [panel['id'] for panel in panels(self.dashboard)
                if panel not in self.dashboard['panels']]
        self.assertEqual(len(ids), len(set(ids)))
        taken = {}
        for panel in self.dashboard['panels']:
            grid = panel['gridPos']
            self.assertLessEqual(grid['x'] + grid['w'], GRID_WIDTH,
                                 panel['title'])
            for x in range(grid['x'], grid['x'] + grid['w']):
                for y in range(grid['y'], grid['y'] + grid['h']):
                    self.assertNotIn((x, y), taken, panel['title'])
                    taken[(x, y)] = panel['title']

    def test_queries_parse(self):
        exprs = [expr for where, expr in queries(self.dashboard) if expr]
        directory = self.useFixture(fixtures.TempDir()).path
        status, output = promtool_parse(exprs, directory)
        self.assertEqual(0, status, output)
        self.assertIn('SUCCESS: %d rules found' % len(exprs), output)

    def test_parse_check_catches_a_broken_query(self):
        directory = self.useFixture(fixtures.TempDir()).path
        status, output = promtool_parse(
            ['sum by (route) (rate(placement_conflicts_total[$__interval])'],
            directory)
        self.assertNotEqual(0, status, output)

    def test_queries_use_documented_metrics_and_labels(self):
        labels = reference.all_labels(self.metrics)
        for where, expr in queries(self.dashboard):
            self.assertIsNotNone(expr, where)
            usage = promql.usage(substitute_variables(expr))
            self.assertTrue(usage.metrics, where)
            for name in usage.metrics:
                self.assertIsNotNone(
                    reference.metric_of_series(name, self.metrics),
                    '%s: %s' % (where, name))
            self.assertEqual(set(), usage.labels - labels, where)
            self.assertEqual(set(), usage.functions - promql.FUNCTIONS,
                             where)

    def test_legends_name_documented_labels(self):
        labels = reference.all_labels(self.metrics)
        for panel in panels(self.dashboard):
            for target in panel['targets']:
                legend = set(_LEGEND_LABEL.findall(
                    target.get('legendFormat', '')))
                self.assertEqual(set(), legend - labels, panel['title'])

    def test_variables_are_defined(self):
        for where, expr in queries(self.dashboard):
            self.assertEqual(
                set(), variables_used(expr or '') - self.variables
                - set(BUILTINS), where)
