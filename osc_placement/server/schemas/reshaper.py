"""POST /reshaper (1.30): new inventories and allocations for a tree."""

import copy

from osc_placement.server.schemas import allocation
from osc_placement.server.schemas import inventory

_PROVIDER_INVENTORIES = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'inventories': {
            'type': 'object',
            'patternProperties': {
                inventory.RC_PATTERN: copy.deepcopy(inventory.RECORD_IN_SET),
            },
            'additionalProperties': False,
        },
    },
    'required': ['inventories', 'resource_provider_generation'],
    'additionalProperties': False,
}


def _reshape(allocations):
    allocations = copy.deepcopy(allocations)
    # An inventory-only reshape names no consumer.
    allocations.pop('minProperties', None)
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'minProperties': 1,
                'patternProperties': {
                    allocation.UUID_KEY: _PROVIDER_INVENTORIES},
                'additionalProperties': False,
            },
            'allocations': allocations,
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


# The reshaper came after consumer generations: its allocations are
# POST /allocations' of the same version.
_POST_BY_RULE = dict(allocation.POST)
RESHAPE = [('reshaper', _reshape(_POST_BY_RULE['consumer_generations'])),
           ('mappings', _reshape(_POST_BY_RULE['mappings'])),
           ('consumer_types', _reshape(_POST_BY_RULE['consumer_types']))]
