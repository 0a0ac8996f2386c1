"""Microversions: the version table, header parsing and comparisons.

A request's version is a ``Version`` (a ``(major, minor)`` tuple), so code
compares with ``version >= (1, 25)``. What each version adds is data in
``VERSIONS``; code asks ``version.supports('feature')`` or compares tuples.
"""

import re

from osc_placement.server import errors

SERVICE = 'placement'
HEADER = 'OpenStack-API-Version'
ENVIRON_HEADER = 'HTTP_OPENSTACK_API_VERSION'

# One row per microversion: (minor, short description of what it adds).
VERSIONS = (
    (0, 'base: providers, inventories, usages, allocations'),
    (1, 'provider aggregates'),
    (2, 'resource classes'),
    (3, 'member_of on GET /resource_providers'),
    (4, 'resources on GET /resource_providers'),
    (5, 'DELETE all inventories'),
    (6, 'traits'),
    (7, 'PUT /resource_classes/{name} is create-or-verify'),
    (8, 'project_id and user_id required in allocations'),
    (9, 'GET /usages'),
    (10, 'GET /allocation_candidates'),
    (11, 'allocations link on providers'),
    (12, 'dict-format allocations'),
    (13, 'POST /allocations'),
    (14, 'nested providers, in_tree'),
    (15, 'last-modified and cache-control'),
    (16, 'limit on allocation candidates'),
    (17, 'required traits on allocation candidates'),
    (18, 'required traits on GET /resource_providers'),
    (19, 'aggregates carry the provider generation'),
    (20, 'POST /resource_providers returns the provider'),
    (21, 'member_of on allocation candidates'),
    (22, 'forbidden traits'),
    (23, 'error codes'),
    (24, 'repeated member_of'),
    (25, 'granular request groups'),
    (26, 'reserved may equal total'),
    (27, 'all inventories in provider summaries'),
    (28, 'consumer generations'),
    (29, 'nested allocation candidates'),
    (30, 'reshaper'),
    (31, 'in_tree on allocation candidates'),
    (32, 'forbidden aggregates'),
    (33, 'string request group suffixes'),
    (34, 'mappings in allocation requests'),
    (35, 'root_required'),
    (36, 'same_subtree and resourceless groups'),
    (37, 'provider re-parenting'),
    (38, 'consumer types'),
    (39, 'any-of traits in required'),
)

# Named features, for code that reads better asking "does it support X".
FEATURES = {
    'aggregates': (1, 1),
    'resource_classes': (1, 2),
    'member_of': (1, 3),
    'resources_filter': (1, 4),
    'delete_all_inventories': (1, 5),
    'traits': (1, 6),
    'rc_put_create': (1, 7),
    'allocation_project_user': (1, 8),
    'usages': (1, 9),
    'allocation_candidates': (1, 10),
    'allocations_link': (1, 11),
    'dict_allocations': (1, 12),
    'multi_consumer_allocations': (1, 13),
    'nested': (1, 14),
    'cache_headers': (1, 15),
    'required_filter': (1, 18),
    'aggregate_generation': (1, 19),
    'create_returns_body': (1, 20),
    'forbidden_traits': (1, 22),
    'error_codes': (1, 23),
    'multi_member_of': (1, 24),
    'reserved_eq_total': (1, 26),
    'consumer_generations': (1, 28),
    'reshaper': (1, 30),
    'forbidden_aggregates': (1, 32),
    'reparent': (1, 37),
    'consumer_types': (1, 38),
    'any_traits': (1, 39),
}


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

    def supports(self, feature):
        return self >= FEATURES[feature]

    def __str__(self):
        return '%d.%d' % self


MIN_VERSION = Version(1, VERSIONS[0][0])
MAX_VERSION = Version(1, VERSIONS[-1][0])
_KNOWN = frozenset(Version(1, minor) for minor, _ in VERSIONS)
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
    if version not in _KNOWN:
        raise _not_acceptable(value)
    return version


def response_header(version):
    return '%s %s' % (SERVICE, version)
