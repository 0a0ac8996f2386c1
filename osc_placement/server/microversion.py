# SPDX-License-Identifier: Apache-2.0
"""Microversions: the rule table, header parsing and comparisons.

Every version-dependent rule of the server -- a route, a query parameter,
a body field, a candidate semantic, a response shape -- is a named row of
``RULES``; code asks ``req.version.supports('same_subtree')`` and never
compares version numbers itself. A ``Version`` is still a comparable
``(major, minor)`` tuple, so it keys caches and sorts like one.
"""

import collections
import re

from osc_placement.server import errors

SERVICE = 'placement'
HEADER = 'OpenStack-API-Version'
ENVIRON_HEADER = 'HTTP_OPENSTACK_API_VERSION'

Rule = collections.namedtuple('Rule', 'name since what')


class Version(tuple):
    """A comparable ``(major, minor)`` microversion."""

    __slots__ = ()

    def __new__(cls, major, minor):
        return super().__new__(cls, (major, minor))

    @property
    def major(self):
        return self[0]

    @property
    def minor(self):
        return self[1]

    def supports(self, rule):
        """Whether this version has the row of RULES named ``rule``."""
        return self >= SINCE[rule]

    def __str__(self):
        return '%d.%d' % self


def _rules(*rows):
    """Rules from (name, 'major.minor', what) rows, one name each."""
    rules = tuple(Rule(name, Version(*map(int, since.split('.'))), what)
                  for name, since, what in rows)
    names = [rule.name for rule in rules]
    if len(set(names)) != len(names):
        raise ValueError('a rule name is used twice in RULES')
    return rules


# One row per version-dependent rule: its name, the version it starts at
# and what it adds or changes. Every version has at least one row (its
# own entry in upstream's history); several rules may share a version.
RULES = _rules(
    ('base', '1.0', 'providers, inventories, usages, allocations'),
    ('aggregates', '1.1', 'provider aggregates'),
    ('resource_classes', '1.2', 'resource classes'),
    ('member_of', '1.3', 'member_of on GET /resource_providers'),
    ('resources_filter', '1.4', 'resources on GET /resource_providers'),
    ('delete_all_inventories', '1.5', 'DELETE all inventories'),
    ('traits', '1.6', 'traits'),
    ('rc_put_create', '1.7',
     'PUT /resource_classes/{name} is create-or-verify'),
    ('allocation_project_user', '1.8',
     'project_id and user_id required in allocations'),
    ('usages', '1.9', 'GET /usages'),
    ('allocation_candidates', '1.10', 'GET /allocation_candidates'),
    ('allocations_link', '1.11', 'allocations link on providers'),
    ('dict_allocations', '1.12',
     'dict-format allocations, in bodies and allocation requests'),
    ('multi_consumer_allocations', '1.13', 'POST /allocations'),
    ('nested', '1.14', 'nested providers, in_tree'),
    ('cache_headers', '1.15', 'last-modified and cache-control'),
    ('candidate_limit', '1.16', 'limit on allocation candidates'),
    ('candidate_required', '1.17', 'required traits on allocation candidates'),
    ('summary_traits', '1.17', 'traits in provider summaries'),
    ('required_filter', '1.18', 'required traits on GET /resource_providers'),
    ('aggregate_generation', '1.19',
     'aggregates carry the provider generation'),
    ('create_returns_body', '1.20',
     'POST /resource_providers returns the provider'),
    ('candidate_member_of', '1.21', 'member_of on allocation candidates'),
    ('forbidden_traits', '1.22', 'forbidden traits'),
    ('error_codes', '1.23', 'error codes'),
    ('multi_member_of', '1.24', 'repeated member_of'),
    ('granular', '1.25', 'granular request groups'),
    ('reserved_eq_total', '1.26', 'reserved may equal total'),
    ('summary_all_classes', '1.27',
     'all inventories in provider summaries'),
    ('consumer_generations', '1.28', 'consumer generations'),
    ('nested_candidates', '1.29',
     'nested allocation candidates: groups may span a tree'),
    ('summary_tree', '1.29', 'parent and root in provider summaries'),
    ('reshaper', '1.30', 'reshaper'),
    ('candidate_in_tree', '1.31', 'in_tree on allocation candidates'),
    ('forbidden_aggregates', '1.32', 'forbidden aggregates'),
    ('string_suffixes', '1.33', 'string request group suffixes'),
    ('mappings', '1.34', 'mappings in allocation requests'),
    ('root_required', '1.35', 'root_required'),
    ('same_subtree', '1.36', 'same_subtree and resourceless groups'),
    ('reparent', '1.37', 'provider re-parenting'),
    ('consumer_types', '1.38', 'consumer types'),
    ('any_traits', '1.39', 'any-of traits in required'),
)
# The version each rule starts at, by name.
SINCE = {rule.name: rule.since for rule in RULES}
# The versions this server answers, oldest first: those a row starts at.
KNOWN = tuple(sorted(set(SINCE.values())))
MIN_VERSION = KNOWN[0]
MAX_VERSION = KNOWN[-1]
_ANSWERED = frozenset(KNOWN)
_PAIR_SPLIT = re.compile(r'\s*,\s*')


def _requested_value(header):
    """The value of the last ``placement <v>`` pair in the header."""
    value = None
    for pair in _PAIR_SPLIT.split(header.strip()):
        parts = pair.split(None, 1)
        if len(parts) == 2 and parts[0].lower() == SERVICE:
            value = parts[1].strip()
    return value


def _not_acceptable(value):
    # WebOb's 406 template puts the client's Accept before the message.
    err = errors.NotAcceptable(
        'Invalid microversion: Unacceptable version header: %s' % value)
    err.extra = {'max_version': str(MAX_VERSION),
                 'min_version': str(MIN_VERSION)}
    return err


def parse(header):
    """Return the Version a header value asks for, or raise 400/406."""
    value = _requested_value(header) if header else None
    if value is None:
        return MIN_VERSION
    if value == 'latest':
        return MAX_VERSION
    try:
        major, minor = value.split('.', 1)
        version = Version(int(major), int(minor))
    except ValueError as exc:
        raise errors.BadRequest(
            'Invalid microversion: invalid version string: %s; %s'
            % (value, exc))
    if version not in _ANSWERED:
        raise _not_acceptable(value)
    return version


def response_header(version):
    return '%s %s' % (SERVICE, version)
