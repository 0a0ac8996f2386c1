"""Resource provider bodies (the list query schema lives with its parser in
objects/request_groups.py)."""

import copy

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

CREATE = [('base', _CREATE_10), ('nested', _CREATE_114)]
UPDATE = [('base', _UPDATE_10), ('nested', _UPDATE_114)]
