# SPDX-License-Identifier: Apache-2.0
"""Resource provider bodies, and the query schema of the provider list."""

import copy
import functools

_CREATE_10 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'maxLength': 200},
        'uuid': {'type': 'string', 'format': 'uuid'},
    },
    'required': ['name'],
    'additionalProperties': False,
}
_CREATE_114 = copy.deepcopy(_CREATE_10)
_CREATE_114['properties']['parent_provider_uuid'] = {
    'anyOf': [{'type': 'string', 'format': 'uuid'}, {'type': 'null'}]}

_UPDATE_10 = copy.deepcopy(_CREATE_10)
del _UPDATE_10['properties']['uuid']
_UPDATE_114 = copy.deepcopy(_CREATE_114)
del _UPDATE_114['properties']['uuid']

CREATE = [('base', _CREATE_10), ('nested_providers', _CREATE_114)]
UPDATE = [('base', _UPDATE_10), ('nested_providers', _UPDATE_114)]

# GET /resource_providers filters: (name, rule that adds it, schema).
_LIST_PARAMS = (
    ('name', 'base', {'type': 'string'}),
    ('uuid', 'base', {'type': 'string', 'format': 'uuid'}),
    ('member_of', 'member_of', {'type': 'string'}),
    ('resources', 'resources_filter', {'type': 'string'}),
    ('in_tree', 'nested_providers', {'type': 'string', 'format': 'uuid'}),
    ('required', 'provider_required', {'type': 'string'}),
)


@functools.lru_cache(maxsize=None)
def list_query(version):
    """The query schema of ``GET /resource_providers`` at ``version`` (a
    microversion.Version); one dict per version, which nobody changes."""
    return {'type': 'object',
            'properties': {name: dict(schema)
                           for name, rule, schema in _LIST_PARAMS
                           if version.supports(rule)},
            'additionalProperties': False}
