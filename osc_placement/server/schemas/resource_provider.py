"""Resource provider bodies and the list query."""

import copy

from osc_placement.server.schemas import for_version

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

CREATE = [((1, 0), _CREATE_10), ((1, 14), _CREATE_114)]
UPDATE = [((1, 0), _UPDATE_10), ((1, 14), _UPDATE_114)]


def _query(*extra):
    props = {'name': {'type': 'string'},
             'uuid': {'type': 'string', 'format': 'uuid'}}
    for name in extra:
        props[name] = ({'type': 'string', 'format': 'uuid'}
                       if name == 'in_tree' else {'type': 'string'})
    return {'type': 'object', 'properties': props,
            'additionalProperties': False}


LIST_QUERY = [
    ((1, 0), _query()),
    ((1, 3), _query('member_of')),
    ((1, 4), _query('member_of', 'resources')),
    ((1, 14), _query('member_of', 'resources', 'in_tree')),
    ((1, 18), _query('member_of', 'resources', 'in_tree', 'required')),
]

__all__ = ['CREATE', 'UPDATE', 'LIST_QUERY', 'for_version']
