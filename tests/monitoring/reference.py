# SPDX-License-Identifier: Apache-2.0
"""The metric reference of doc/source/server/monitoring.rst, read as data.

The page is the one place the metric names are written down: the alert
rules, the dashboard and the server's ``/metrics`` are checked against
what it lists, so a name cannot drift in one of them alone.
"""

import collections
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PAGE = os.path.join(TOP, 'doc', 'source', 'server', 'monitoring.rst')
SECTION = 'Metric reference'

# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = frozenset({'job', 'instance'})
# A histogram is stored as these series; only _bucket has "le".
HISTOGRAM_SUFFIXES = ('_bucket', '_sum', '_count')

Metric = collections.namedtuple('Metric', 'name type labels')

_NAME_LINE = re.compile(r'^``([a-zA-Z_:][a-zA-Z0-9_:]*)``$', re.M)
# An entry: the name alone on its line, then its description, which
# starts with the type and the labels.
_ENTRY = re.compile(
    r'^``(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)``\n'
    r' {4}(?P<type>Gauge|Counter|Histogram); '
    r'(?:no labels|labels (?P<labels>``\w+``(?:,\s+``\w+``)*))\.',
    re.M)


def _section(text, title):
    """The body of a top-level section (title underlined with "=")."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines[:-1]):
        heading = _is_heading(lines, i)
        if start is None and heading and line == title:
            start = i + 2
        elif start is not None and heading:
            return '\n'.join(lines[start:i]) + '\n'
    if start is None:
        raise ValueError('%s has no section %r' % (PAGE, title))
    return '\n'.join(lines[start:]) + '\n'


def _is_heading(lines, i):
    underline = lines[i + 1]
    return (bool(lines[i].strip()) and len(underline) >= len(lines[i])
            and set(underline) == {'='})


def documented_metrics(path=PAGE):
    """{name: Metric(name, type, labels)} of the page's reference, where
    type is "gauge", "counter" or "histogram" and labels a frozenset.
    Raises ValueError for an entry whose description does not start with
    its type and labels, rather than leaving it out."""
    with open(path) as f:
        section = _section(f.read(), SECTION)
    metrics = {}
    for match in _ENTRY.finditer(section):
        labels = frozenset(re.findall(r'``(\w+)``',
                                      match.group('labels') or ''))
        metrics[match.group('name')] = Metric(
            match.group('name'), match.group('type').lower(), labels)
    unreadable = set(_NAME_LINE.findall(section)) - set(metrics)
    if unreadable:
        raise ValueError('%s: entries without "Type; labels ``x``." or '
                         '"Type; no labels.": %s'
                         % (path, ', '.join(sorted(unreadable))))
    return metrics


def metric_of_series(name, metrics):
    """The documented metric a series name belongs to, or None: a gauge's
    or counter's own name, or a histogram's name with _bucket, _sum or
    _count (a histogram's bare name is no series)."""
    metric = metrics.get(name)
    if metric is not None and metric.type != 'histogram':
        return metric
    for suffix in HISTOGRAM_SUFFIXES:
        base = metrics.get(name[:-len(suffix)]) if name.endswith(
            suffix) else None
        if base is not None and base.type == 'histogram':
            return base
    return None


def labels_of_series(name, metrics):
    """The labels a scraped series of that name may have."""
    metric = metric_of_series(name, metrics)
    if metric is None:
        return frozenset()
    labels = metric.labels | TARGET_LABELS
    if metric.type == 'histogram' and name.endswith('_bucket'):
        labels |= {'le'}
    return labels


def all_labels(metrics):
    """Every label a documented series may have."""
    labels = set(TARGET_LABELS) | {'le'}
    for metric in metrics.values():
        labels |= metric.labels
    return frozenset(labels)
