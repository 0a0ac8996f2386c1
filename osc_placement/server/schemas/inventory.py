"""Inventory bodies."""

import copy

MAX_INT = 2147483647
RC_PATTERN = '^[A-Z0-9_]+$'

_RECORD_PROPS = {
    'total': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
    'reserved': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 0},
    'min_unit': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
    'max_unit': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
    'step_size': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
    'allocation_ratio': {'type': 'number', 'maximum': 3.40282e+38},
}

_GENERATION = {'type': 'integer'}

CREATE = {
    'type': 'object',
    'properties': dict(
        copy.deepcopy(_RECORD_PROPS),
        resource_class={'type': 'string', 'pattern': RC_PATTERN},
        resource_provider_generation=_GENERATION),
    'required': ['total', 'resource_class'],
    'additionalProperties': False,
}

UPDATE_ONE = {
    'type': 'object',
    'properties': dict(copy.deepcopy(_RECORD_PROPS),
                       resource_provider_generation=_GENERATION),
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}

_RECORD_IN_SET = {
    'type': 'object',
    'properties': copy.deepcopy(_RECORD_PROPS),
    'required': ['total'],
    'additionalProperties': False,
}
# The reshaper's per-class record.
RECORD_IN_SET = _RECORD_IN_SET

# A key of 'inventories' that is no class name passes, as upstream, and
# gets upstream's 400 "Unknown resource class" from the write [quirk];
# its value must still be a record (upstream leaves it unchecked and
# answers 500 when it is not).
SET_ALL = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': _GENERATION,
        'inventories': {
            'type': 'object',
            'patternProperties': {RC_PATTERN: _RECORD_IN_SET},
            'additionalProperties': _RECORD_IN_SET,
        },
    },
    'required': ['inventories', 'resource_provider_generation'],
    'additionalProperties': False,
}
