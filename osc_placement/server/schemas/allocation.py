# SPDX-License-Identifier: Apache-2.0
"""Allocation bodies: PUT /allocations/{c} per version, POST /allocations.

Each later shape is the earlier one plus (or minus) a field, built by
copying, so the table reads as the version history in §2.7 of the spec.
"""

import copy
import re

from osc_placement.server.schemas.inventory import RC_PATTERN

# Provider and consumer keys: any 36 hex-or-dash characters (upstream's
# pattern; dashless uuids are refused by it).
UUID_KEY = '^[0-9a-fA-F-]{36}$'

RESOURCES = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {RC_PATTERN: {'type': 'integer', 'minimum': 1}},
    'additionalProperties': False,
}

_EXTERNAL_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255}

_PUT_10 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {'uuid': {'type': 'string',
                                                'format': 'uuid'}},
                        'additionalProperties': False,
                        'required': ['uuid'],
                    },
                    'resources': RESOURCES,
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['allocations'],
    'additionalProperties': False,
}

_PUT_18 = copy.deepcopy(_PUT_10)
_PUT_18['properties'].update(project_id=_EXTERNAL_ID, user_id=_EXTERNAL_ID)
_PUT_18['required'].extend(['project_id', 'user_id'])

# 1.12 is written anew upstream, its keys in another order than 1.8's.
_PUT_112 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'object',
            'minProperties': 1,
            'patternProperties': {
                UUID_KEY: {
                    'type': 'object',
                    'properties': {
                        # Accepted and ignored, as upstream.
                        'generation': {'type': 'integer'},
                        'resources': RESOURCES,
                    },
                    'required': ['resources'],
                    'additionalProperties': False,
                },
            },
            'additionalProperties': False,
        },
        'project_id': _EXTERNAL_ID,
        'user_id': _EXTERNAL_ID,
    },
    'additionalProperties': False,
    'required': ['allocations', 'project_id', 'user_id'],
}

# Empty allocations allowed: they remove the consumer's allocations.
_DELETABLE = copy.deepcopy(_PUT_112)
_DELETABLE['properties']['allocations']['minProperties'] = 0

# 1.28: the consumer generation (null = new consumer); {} deletes.
# "additionalProperties" means nothing beside a type that is no object,
# but it is upstream's, and a 400 text prints it.
_PUT_128 = copy.deepcopy(_DELETABLE)
_PUT_128['properties']['consumer_generation'] = {
    'type': ['integer', 'null'], 'additionalProperties': False}
_PUT_128['required'].append('consumer_generation')

# 1.34: mappings from allocation candidates, accepted and ignored. The
# key pattern is unanchored upstream.
MAPPINGS = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        '[a-zA-Z0-9_-]{1,64}': {
            'type': 'array',
            'minItems': 1,
            'items': {'type': 'string', 'format': 'uuid'},
        },
    },
}
_PUT_134 = copy.deepcopy(_PUT_128)
_PUT_134['properties']['mappings'] = MAPPINGS

_PUT_138 = copy.deepcopy(_PUT_134)
_PUT_138['properties']['consumer_type'] = {
    'type': 'string', 'pattern': RC_PATTERN, 'minLength': 1,
    'maxLength': 255}
_PUT_138['required'].append('consumer_type')

PUT = [('base', _PUT_10), ('allocation_project_user', _PUT_18),
       ('dict_allocations', _PUT_112), ('consumer_generations', _PUT_128),
       ('candidate_mappings', _PUT_134), ('consumer_types', _PUT_138)]


def by_consumer(entry, min_consumers=1):
    """POST /allocations: ``entry`` per consumer key (the reshaper's
    allocations: ``min_consumers`` 0)."""
    return {
        'type': 'object',
        'minProperties': min_consumers,
        'additionalProperties': False,
        'patternProperties': {UUID_KEY: copy.deepcopy(entry)},
    }


POST = [('multi_consumer_allocations', by_consumer(_DELETABLE)),
        ('consumer_generations', by_consumer(_PUT_128)),
        ('candidate_mappings', by_consumer(_PUT_134)),
        ('consumer_types', by_consumer(_PUT_138))]


# -- the claim's direct check -------------------------------------------
#
# Schedulers claim with PUT /allocations/{c} on every boot, and a
# jsonschema run over the claim's body is a large part of that request's
# Python. The functions below accept the common shape of that body at
# 1.28 and later in plain Python: a subset of what the version's schema
# accepts (tests/unit/server/test_claim_body.py holds them to it). Any
# body they do not accept goes to jsonschema, so every 400 is unchanged.
# Types are compared exactly: a bool is no JSON integer, and a float that
# the schema would take as one is simply left to it.

_RC_KEY = re.compile(RC_PATTERN)
_UUID_KEY = re.compile(UUID_KEY)
_CLAIM_128_KEYS = frozenset(
    ['allocations', 'project_id', 'user_id', 'consumer_generation'])
_CLAIM_138_KEYS = _CLAIM_128_KEYS | {'consumer_type'}
_ENTRY_KEYS = frozenset(['generation', 'resources'])


def _is_int(value):
    return type(value) is int


def _is_external_id(value):
    """_EXTERNAL_ID's rules."""
    return type(value) is str and 1 <= len(value) <= 255


def _is_consumer_type(value):
    """_PUT_138's consumer_type: the class pattern, as jsonschema searches."""
    return _is_external_id(value) and _RC_KEY.search(value) is not None


def _are_resources(resources):
    """RESOURCES' rules: at least one class, each a positive integer."""
    return (type(resources) is dict and len(resources) >= 1
            and all(_RC_KEY.search(name) is not None
                    and _is_int(amount) and amount >= 1
                    for name, amount in resources.items()))


def _is_entry(entry):
    """One provider's entry: resources, and the ignored generation."""
    return (type(entry) is dict and 'resources' in entry
            and entry.keys() <= _ENTRY_KEYS
            and _is_int(entry.get('generation', 0))
            and _are_resources(entry['resources']))


def _are_allocations(allocations):
    """_DELETABLE's allocations: provider uuid keys, none needed."""
    return type(allocations) is dict and all(
        _UUID_KEY.search(uuid) is not None and _is_entry(entry)
        for uuid, entry in allocations.items())


def _has_claim_fields(body):
    """The fields _PUT_128 requires, each by its rules."""
    generation = body['consumer_generation']
    return ((generation is None or _is_int(generation))
            and _is_external_id(body['project_id'])
            and _is_external_id(body['user_id'])
            and _are_allocations(body['allocations']))


def _claim_128(body):
    """_PUT_128's and _PUT_134's body without mappings."""
    return (type(body) is dict and body.keys() == _CLAIM_128_KEYS
            and _has_claim_fields(body))


def _claim_138(body):
    """_PUT_138's body without mappings: consumer_type is required."""
    return (type(body) is dict and body.keys() == _CLAIM_138_KEYS
            and _is_consumer_type(body['consumer_type'])
            and _has_claim_fields(body))


# PUT's direct checks, read like PUT by schemas.for_version (None: none).
PUT_DIRECT = [('base', None), ('consumer_generations', _claim_128),
              ('consumer_types', _claim_138)]
