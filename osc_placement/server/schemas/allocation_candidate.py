# SPDX-License-Identifier: Apache-2.0
"""The query schema of ``GET /allocation_candidates`` (upstream's, as
data), checked by ``check_query`` before schemas/request_groups.py parses
the query."""

import functools

from osc_placement.server import microversion
from osc_placement.server import schemas
from osc_placement.server.schemas import request_groups as rg

# Query parameters before granular groups replace the unsuffixed ones:
# (name, rule that adds it, schema).
_PARAMS = (
    ('resources', 'allocation_candidates', {'type': 'string'}),
    ('limit', 'candidate_limit', {'type': ['integer', 'string'],
                                  'pattern': rg.LIMIT_PATTERN, 'minimum': 1,
                                  'minLength': 1}),
    ('required', 'candidate_required', {'type': ['string']}),
    ('member_of', 'candidate_member_of', {'type': ['string']}),
)


def check_query(pairs, version):
    """400 unless the query ``pairs`` pass ``version``'s schema, which sees
    each key's last value, as upstream's does."""
    # A plain (major, minor) pair from a test or tool asks by name too.
    version = microversion.Version(*version)
    schemas.validate_query(dict(pairs), query(version))


@functools.lru_cache(maxsize=None)
def query(version):
    """The query schema upstream applies at ``version`` (a
    microversion.Version that has GET /allocation_candidates); one dict
    per version, which nobody changes."""
    props = {name: dict(schema) for name, rule, schema in _PARAMS
             if version.supports(rule)}
    schema = {'type': 'object', 'properties': props,
              'required': ['resources'], 'additionalProperties': False}
    if version.supports('granular_groups'):
        for name in ('resources', 'required', 'member_of'):
            del props[name]
        del schema['required']
        props['group_policy'] = {'type': 'string',
                                 'enum': ['none', 'isolate']}
        schema['patternProperties'] = _group_key_patterns(version)
    if version.supports('root_required'):
        props['root_required'] = {'type': ['string']}
    if version.supports('same_subtree'):
        props['same_subtree'] = {'type': ['string']}
    return schema


def _group_key_patterns(version):
    prefixes = list(rg.GROUP_PREFIXES)
    if not version.supports('candidate_in_tree'):
        prefixes.remove('in_tree')
    return {'^%s(%s)?$' % (prefix, rg.group_suffix(version)):
            {'type': 'string'} for prefix in prefixes}
