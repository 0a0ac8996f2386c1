# SPDX-License-Identifier: Apache-2.0
"""The metric names and labels a PromQL expression refers to.

Not a parser: promtool checks that expressions parse. This finds the
identifiers that are metric names once strings, label matchers, ranges,
grouping clauses, functions and keywords are set aside, so that the
tests can check each against the metric reference. Anything it cannot
place counts as a metric name, so a mistake here makes a check fail
rather than pass.
"""

import collections
import re

# PromQL's functions and aggregation operators.
FUNCTIONS = frozenset("""
    abs absent absent_over_time acos acosh asin asinh atan atanh
    avg_over_time ceil changes clamp clamp_max clamp_min count_over_time
    cos cosh day_of_month day_of_week day_of_year days_in_month deg delta
    deriv exp floor histogram_count histogram_fraction histogram_quantile
    histogram_sum holt_winters hour idelta increase irate label_join
    label_replace last_over_time ln log10 log2 max_over_time min_over_time
    minute month pi predict_linear present_over_time quantile_over_time
    rad rate resets round scalar sgn sin sinh sort sort_desc sqrt
    stddev_over_time stdvar_over_time sum_over_time tan tanh time
    timestamp vector year
    sum min max avg group stddev stdvar count count_values bottomk topk
    quantile
""".split())
KEYWORDS = frozenset("""
    and or unless bool offset by without on ignoring group_left
    group_right inf nan
""".split())

Usage = collections.namedtuple('Usage', 'metrics labels functions')

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r'\{([^{}]*)\}')
_MATCHER_LABEL = re.compile(r'([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)')
_RANGE = re.compile(r'\[[^\[\]]*\]')
_GROUPING = re.compile(
    r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)',
    re.I)
# Not inside a number ("1e3") or a duration ("5m").
_IDENTIFIER = re.compile(r'(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?')


def usage(expr):
    """Usage(metrics, labels, functions) of an expression: sets of the
    metric names, the label names (in matchers and grouping clauses) and
    the functions it calls."""
    labels = set()
    text = _STRING.sub('""', expr)
    for matchers in _MATCHERS.findall(text):
        labels.update(_MATCHER_LABEL.findall(matchers))
    text = _MATCHERS.sub(' ', text)
    text = _RANGE.sub(' ', text)
    for grouping in _GROUPING.findall(text):
        labels.update(name.strip() for name in grouping.split(',')
                      if name.strip())
    text = _GROUPING.sub(' ', text)
    metrics, functions = set(), set()
    for name, call in _IDENTIFIER.findall(text):
        if call:
            functions.add(name)
        elif name.lower() not in KEYWORDS and name not in FUNCTIONS:
            metrics.add(name)
    return Usage(metrics, labels, functions)
