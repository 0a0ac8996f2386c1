# SPDX-License-Identifier: Apache-2.0
"""POST /reshaper (1.30): new inventories and allocations for a tree.

Upstream's schemas in upstream's order (see schemas/inventory.py), with
a guard checked after them."""

import copy

from osc_placement.server.schemas import allocation
from osc_placement.server.schemas import inventory


def _reshape(consumers):
    # The reshaper came after consumer generations: its allocations are
    # POST /allocations' of the same version, or none (an inventory-only
    # reshape names no consumer).
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'patternProperties': {
                    allocation.UUID_KEY: copy.deepcopy(inventory.SET_ALL)},
                'minProperties': 1,
                'additionalProperties': False,
            },
            'allocations': allocation.by_consumer(consumers,
                                                  min_consumers=0),
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


_PUT = dict(allocation.PUT)
RESHAPE = [('reshaper', _reshape(_PUT['consumer_generations'])),
           ('candidate_mappings', _reshape(_PUT['candidate_mappings'])),
           ('consumer_types', _reshape(_PUT['consumer_types']))]

# Each provider's inventories as inventory.SET_ALL_GUARD has them.
GUARD = {
    'type': 'object',
    'properties': {
        'inventories': {
            'type': 'object',
            'additionalProperties': inventory.SET_ALL_GUARD,
        },
    },
}
