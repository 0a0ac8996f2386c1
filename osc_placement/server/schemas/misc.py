# SPDX-License-Identifier: Apache-2.0
"""Schemas for resource classes, traits, aggregates and usages."""

import copy

RESOURCE_CLASS = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$',
                 'maxLength': 255},
    },
    'required': ['name'],
    'additionalProperties': False,
}

TRAITS_QUERY = {
    'type': 'object',
    'properties': {'name': {'type': 'string'},
                   'associated': {'type': 'string'}},
    'additionalProperties': False,
}

PROVIDER_TRAITS = {
    'type': 'object',
    'properties': {
        'traits': {'type': 'array',
                   'items': {'type': 'string', 'minLength': 1,
                             'maxLength': 255}},
        'resource_provider_generation': {'type': 'integer'},
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}

_AGG_LIST = {'type': 'array',
             'items': {'type': 'string', 'format': 'uuid'},
             'uniqueItems': True}
AGGREGATES_11 = _AGG_LIST
AGGREGATES_119 = {
    'type': 'object',
    'properties': {'aggregates': copy.deepcopy(_AGG_LIST),
                   'resource_provider_generation': {'type': 'integer'}},
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}

_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255}
USAGES_19 = {
    'type': 'object',
    'properties': {'project_id': _ID, 'user_id': _ID},
    'required': ['project_id'],
    'additionalProperties': False,
}
USAGES_138 = copy.deepcopy(USAGES_19)
USAGES_138['properties']['consumer_type'] = {
    'type': 'string', 'pattern': '^[A-Z0-9_]+$|^all|^unknown$',
    'minLength': 1, 'maxLength': 255}
