# SPDX-License-Identifier: Apache-2.0
"""Inventory bodies.

Upstream's schemas, their keys in upstream's order: a 400 prints the
schema that failed, in that order (schemas.validate). Where upstream's
schema lets a body through that its handler then fails on, a guard
schema (``*_GUARD``) is checked after it."""

import copy

MAX_INT = 2147483647
RC_PATTERN = '^[A-Z0-9_]+$'


def _bounded(minimum):
    return {'type': 'integer', 'maximum': MAX_INT, 'minimum': minimum}


# PUT .../inventories/{class}: the generation first, as upstream lists it.
UPDATE_ONE = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'total': _bounded(1),
        'reserved': _bounded(0),
        'min_unit': _bounded(1),
        'max_unit': _bounded(1),
        'step_size': _bounded(1),
        'allocation_ratio': {'type': 'number', 'maximum': 3.40282e+38},
    },
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}

CREATE = copy.deepcopy(UPDATE_ONE)
CREATE['properties']['resource_class'] = {'type': 'string',
                                          'pattern': RC_PATTERN}
CREATE['required'] = ['total', 'resource_class']

# One record of a set (and of the reshaper's): a generation is allowed
# in it, and ignored, as upstream.
RECORD_IN_SET = copy.deepcopy(UPDATE_ONE)
RECORD_IN_SET['required'] = ['total']

SET_ALL = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'inventories': {
            'type': 'object',
            'patternProperties': {RC_PATTERN: RECORD_IN_SET},
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}

# A key of 'inventories' that is no class name passes upstream's schema,
# and gets upstream's 400 "Unknown resource class" from the write
# [quirk]; its value must still be a record (upstream leaves it
# unchecked and answers 500 when it is not).
INVENTORIES_GUARD = {
    'type': 'object',
    'patternProperties': {RC_PATTERN: RECORD_IN_SET},
    'additionalProperties': RECORD_IN_SET,
}
SET_ALL_GUARD = {
    'type': 'object',
    'properties': {'inventories': INVENTORIES_GUARD},
}
