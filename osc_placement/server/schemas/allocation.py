"""Allocation bodies: PUT /allocations/{c} per version, POST /allocations.

Each later shape is the earlier one plus (or minus) a field, built by
copying, so the table reads as the version history in §2.7 of the spec.
"""

import copy

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
                        'required': ['uuid'],
                        'additionalProperties': False,
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

_PUT_112 = copy.deepcopy(_PUT_18)
_PUT_112['properties']['allocations'] = {
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
}

# 1.28: the consumer generation (null = new consumer); {} deletes.
_PUT_128 = copy.deepcopy(_PUT_112)
_PUT_128['properties']['consumer_generation'] = {'type': ['integer', 'null']}
_PUT_128['required'].append('consumer_generation')
del _PUT_128['properties']['allocations']['minProperties']

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
       ('mappings', _PUT_134), ('consumer_types', _PUT_138)]


def _by_consumer(entry):
    """POST /allocations: ``entry`` per consumer key; empty allocations
    allowed (they remove that consumer's allocations)."""
    entry = copy.deepcopy(entry)
    entry['properties']['allocations'].pop('minProperties', None)
    return {
        'type': 'object',
        'minProperties': 1,
        'patternProperties': {UUID_KEY: entry},
        'additionalProperties': False,
    }


POST = [('multi_consumer_allocations', _by_consumer(_PUT_112)),
        ('consumer_generations', _by_consumer(_PUT_128)),
        ('mappings', _by_consumer(_PUT_134)),
        ('consumer_types', _by_consumer(_PUT_138))]
