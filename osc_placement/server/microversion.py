# SPDX-License-Identifier: Apache-2.0
"""Microversions: the rule table, header parsing and comparisons.

Every version-dependent rule of the server -- a route, a query parameter,
a body field, a candidate semantic, a response shape -- is a named row of
``RULES``, read from the vocabulary the client shares
(``osc_placement.microversions``). Code asks
``req.version.supports('same_subtree')`` and never compares version
numbers itself. A ``Version`` is still a comparable
``(major, minor)`` tuple, so it keys caches and sorts like one.
"""

import collections
import re

from osc_placement import microversions
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


def _version(text):
    """The Version of an ``X.Y`` string of the vocabulary."""
    major, minor = text.split('.')
    return Version(int(major), int(minor))


# One row per version-dependent rule, from the vocabulary the client
# shares: its name, the version it starts at and what it adds or changes.
RULES = tuple(Rule(name, _version(feature.since), feature.what)
              for name, feature in microversions.FEATURES.items())
# The version each rule starts at, by name.
SINCE = {rule.name: rule.since for rule in RULES}
# The versions this server answers, oldest first: those a row starts at.
KNOWN = tuple(sorted(set(SINCE.values())))
MIN_VERSION = KNOWN[0]
MAX_VERSION = _version(microversions.MAX_VERSION)
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
