# SPDX-License-Identifier: Apache-2.0
"""The monitoring files the package ships, and how to read them."""

import os
import re

import yaml

from tests.monitoring import reference

RULES_DIR = os.path.join(reference.TOP, 'etc', 'prometheus')
RULES = os.path.join(RULES_DIR, 'placement-rules.yaml')
RULE_TESTS = os.path.join(RULES_DIR, 'placement-rules.test.yaml')
DASHBOARD = os.path.join(reference.TOP, 'etc', 'grafana',
                         'placement-dashboard.json')

_TEMPLATE_LABEL = re.compile(r'\$labels\.(\w+)')
_SERIES = re.compile(r'^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{.*\})?\s*$')
_SERIES_LABEL = re.compile(r'([a-zA-Z_]\w*)\s*=')


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def alerts(rules):
    """[rule] of every alerting rule of a loaded rule file."""
    return [rule for group in rules['groups'] for rule in group['rules']
            if 'alert' in rule]


def series_name_and_labels(series):
    """(name, label names) of a promtool input series such as
    'metric{a="1",b="2"}'."""
    match = _SERIES.match(series)
    if match is None:
        raise ValueError('not a series: %r' % series)
    labels = _SERIES_LABEL.findall(re.sub(r'"(?:[^"\\]|\\.)*"', '""',
                                          match.group(2) or ''))
    return match.group(1), set(labels)


def template_labels(text):
    """The labels an alert's annotation template reads ($labels.x)."""
    return set(_TEMPLATE_LABEL.findall(text))
