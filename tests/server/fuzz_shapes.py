# SPDX-License-Identifier: Apache-2.0
"""Requests shaped by the server's own schemas, then broken in one place.

The fuzzer (test_bad_input_fuzz.py) reads each route's JSON schemas
(osc_placement/server/schemas) as a map: ``valid`` builds a body or query
the schema of a microversion accepts, naming the objects the test seeded
so that it reaches the handler, and ``broken`` changes it at one to three
points anywhere in its depth -- a key added, dropped, renamed or given
twice, a value replaced by one of the wrong type, a huge or negative
number, null, an empty or a very long string. A request mostly valid but
wrong deep inside is the one a handler trusts its schema with.
"""

import json
import re

from hypothesis import strategies as st

from osc_placement.server import microversion
from osc_placement.server.schemas import allocation
from osc_placement.server.schemas import allocation_candidate
from osc_placement.server.schemas import inventory
from osc_placement.server.schemas import misc
from osc_placement.server.schemas import reshaper
from osc_placement.server.schemas import resource_provider

PROVIDER = '5b3a8a8e-2d3f-4b8e-9d55-2b6a1f4d0c01'
CONSUMER = '7c1d9e2a-8f3b-4c6d-a5e4-3b2c1d0e9f08'
AGGREGATE = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b'
NEW_PROVIDER = '3f0c2b1a-9e8d-4c7b-a6f5-e4d3c2b1a0f9'
_INV = '/resource_providers/{uuid}/inventories'

# Each body route and method: its schemas, [(rule, schema or None)] as
# schemas.for_version reads them (None: no body from that rule on).
BODY_SCHEMAS = {
    ('/resource_classes', 'POST'): [
        ('resource_classes', misc.RESOURCE_CLASS)],
    ('/resource_classes/{name}', 'PUT'): [
        ('resource_classes', misc.RESOURCE_CLASS),
        ('idempotent_resource_class', None)],
    ('/resource_providers', 'POST'): resource_provider.CREATE,
    ('/resource_providers/{uuid}', 'PUT'): resource_provider.UPDATE,
    (_INV, 'POST'): [('base', inventory.CREATE)],
    (_INV, 'PUT'): [('base', inventory.SET_ALL)],
    (_INV + '/{resource_class}', 'PUT'): [('base', inventory.UPDATE_ONE)],
    ('/resource_providers/{uuid}/aggregates', 'PUT'): [
        ('aggregates', misc.AGGREGATES_11),
        ('aggregate_generation', misc.AGGREGATES_119)],
    ('/resource_providers/{uuid}/traits', 'PUT'): [
        ('traits', misc.PROVIDER_TRAITS)],
    ('/allocations', 'POST'): allocation.POST,
    ('/allocations/{consumer_uuid}', 'PUT'): allocation.PUT,
    ('/reshaper', 'POST'): reshaper.RESHAPE,
}

# Each route with a query schema: the schema as a function of the version.
QUERY_SCHEMAS = {
    '/resource_providers': resource_provider.list_query,
    '/allocation_candidates': allocation_candidate.query,
    '/traits': lambda version: misc.TRAITS_QUERY,
    '/usages': lambda version: (misc.USAGES_138 if version.supports(
        'consumer_types') else misc.USAGES_19),
}


def body_versions(table):
    """The versions where a body's shape changes (where each rule of its
    table starts), and the newest."""
    return sorted({microversion.SINCE[rule] for rule, _ in table}
                  | {microversion.MAX_VERSION})


def query_versions(schema_of):
    """The versions where a query schema changes, and the newest (from
    the first that has a parameter: the route's own gate)."""
    versions, last = [], None
    for version in microversion.KNOWN:
        schema = schema_of(version)
        if not (schema.get('properties') or schema.get('patternProperties')):
            continue
        if schema != last:
            versions.append(version)
            last = schema
    return sorted(set(versions) | {microversion.MAX_VERSION})


def schema_at(table, version):
    chosen = None
    for rule, schema in table:
        if version.supports(rule):
            chosen = schema
    return chosen


class Live:
    """A generation read from the server just before the request is sent:
    bodies drawn ahead of time stay current after earlier writes."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return 'Live(%r)' % self.what


class Twice:
    """An object written with a key given twice (JSON allows the text;
    parsers keep one of the two)."""

    def __init__(self, pairs):
        self.pairs = pairs

    def __repr__(self):
        return 'Twice(%r)' % (self.pairs,)


# Values a valid body gives a property, by its name.
_BY_NAME = {
    'name': 'fuzzed', 'uuid': NEW_PROVIDER, 'parent_provider_uuid': None,
    'resource_class': 'DISK_GB', 'project_id': 'p', 'user_id': 'u',
    'consumer_type': 'INSTANCE', 'total': 8, 'reserved': 0, 'min_unit': 1,
    'max_unit': 8, 'step_size': 1, 'allocation_ratio': 1.0,
    'generation': 0, 'resource_provider_generation': Live('provider'),
    'consumer_generation': Live('consumer'),
}


def valid(schema, name=None):
    """A value ``schema`` accepts, built from the objects the fuzz test
    seeded (``name``: the property it is the value of)."""
    if 'anyOf' in schema:
        return valid(schema['anyOf'][0], name)
    kind = schema.get('type')
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == 'object':
        return _valid_object(schema)
    if kind == 'array':
        return [valid(schema['items'], name)]
    if schema.get('pattern', '').startswith('^CUSTOM_'):
        return 'CUSTOM_FUZZED'
    if name in _BY_NAME:
        return _BY_NAME[name]
    if kind == 'string':
        if schema.get('format') == 'uuid':
            return AGGREGATE
        return 'CUSTOM_FUZZ' if name == 'traits' else 'fuzzed'
    if kind in ('integer', 'number'):
        return schema.get('minimum', 1)
    return None


def _valid_object(schema):
    properties = schema.get('properties', {})
    if list(properties) == ['uuid']:
        # A reference to a provider (allocations before 1.12).
        return {'uuid': PROVIDER}
    result = {key: valid(sub, key) for key, sub in properties.items()}
    for pattern, sub in schema.get('patternProperties', {}).items():
        key = _key_for(pattern, sub)
        result[key] = valid(sub, key)
    return result


def _key_for(pattern, sub):
    """A key matching ``pattern`` that names a seeded object: a consumer
    where the value is a consumer's record, else a provider."""
    if pattern == allocation.UUID_KEY:
        return (CONSUMER if 'project_id' in sub.get('properties', {})
                else PROVIDER)
    for key in ('VCPU', 'x'):
        if re.search(pattern, key):
            return key
    raise ValueError('no key for pattern %r' % pattern)


# Values of the wrong kind, and the sizes that have broken servers.
HUGE = [2 ** 31, 2 ** 31 - 1, 2 ** 63, 2 ** 64 + 1, -2 ** 63 - 1, 10 ** 30,
        3.4e38, 1.7e308, -1, 0, 1.5, -0.0, float(2 ** 70)]
NASTY = st.one_of(
    st.sampled_from([None, True, False, '', ' ', 'A' * 300, 'x' * 70000,
                     'CUSTOM_' + 'X' * 300, 'lower_case', 'VCPU',
                     'CUSTOM_NOPE', '-' * 36, PROVIDER.upper(),
                     PROVIDER.replace('-', ''), str(CONSUMER), '%s',
                     '\u00e9', '\U0001f600', [], {}, [None], {'': None},
                     {'total': 1}, {'total': 'x'}, [PROVIDER, PROVIDER],
                     {'resources': {'VCPU': 1}}]),
    st.sampled_from(HUGE), st.integers(), st.text(max_size=10))
# Keys an object did not expect: its siblings' names, class names that
# are and are not, uuids that are and are not, empty and long ones.
EXTRA_KEYS = st.sampled_from([
    'consumer_generation', 'resource_provider_generation', 'generation',
    'total', 'resources', 'allocations', 'inventories', 'mappings',
    'project_id', 'consumer_type', 'name', 'uuid', 'lower_case', '',
    'VCPU', 'DISK_GB', 'CUSTOM_NOPE', 'CUSTOM_FUZZ', PROVIDER, CONSUMER,
    NEW_PROVIDER, PROVIDER.upper(), '-' * 36, 'A' * 300, '0' * 36, 'x',
    '%s'])


def _points(value, path=()):
    """Every place in ``value``: (path, the value there)."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _points(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _points(item, path + (index,))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    result = dict(value) if isinstance(value, dict) else list(value)
    result[head] = _replace(value[head], rest, new)
    return result


@st.composite
def _broken_at(draw, here):
    """What to put where ``here`` was."""
    if isinstance(here, dict) and here:
        kind = draw(st.sampled_from(
            ['add', 'add', 'drop', 'rename', 'twice', 'replace']))
    elif isinstance(here, dict):
        kind = draw(st.sampled_from(['add', 'replace']))
    elif isinstance(here, list):
        kind = draw(st.sampled_from(['empty', 'double', 'append',
                                     'replace']))
    else:
        kind = 'replace'
    if kind == 'replace':
        return draw(NASTY)
    if kind == 'add':
        new = dict(here)
        new[draw(EXTRA_KEYS)] = draw(st.one_of(NASTY, st.sampled_from(
            list(here.values()) or [None])))
        return new
    if kind in ('drop', 'rename', 'twice'):
        key = draw(st.sampled_from(sorted(here)))
        new = {k: v for k, v in here.items() if k != key}
        if kind == 'rename':
            new[draw(EXTRA_KEYS)] = here[key]
        if kind == 'twice':
            pairs = list(new.items())
            other = draw(NASTY)
            pairs += draw(st.sampled_from([[(key, other), (key, here[key])],
                                           [(key, here[key]), (key, other)]]))
            return Twice(pairs)
        return new
    if kind == 'empty':
        return []
    if kind == 'double':
        return here + here
    return here + [draw(NASTY)]


@st.composite
def broken(draw, value):
    """``value`` changed at one to three of its places, deeper places
    as likely as the top."""
    for _ in range(draw(st.integers(1, 3))):
        points = [(path, here) for path, here in _points(value)
                  if not isinstance(here, Twice)]
        if not points:
            break
        path, here = draw(st.sampled_from(points))
        value = _replace(value, path, draw(_broken_at(here)))
    return value


def resolve(value, live):
    """``value`` with each Live replaced by ``live(what)``."""
    if isinstance(value, Live):
        return live(value.what)
    if isinstance(value, Twice):
        return Twice([(k, resolve(v, live)) for k, v in value.pairs])
    if isinstance(value, dict):
        return {k: resolve(v, live) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, live) for v in value]
    return value


def dumps(value):
    """JSON text of ``value``, a Twice written with its key twice. The
    standard library's: orjson refuses integers past 64 bits, which are
    exactly what a client may send."""
    if isinstance(value, Twice):
        return '{%s}' % ', '.join('%s: %s' % (json.dumps(k), dumps(v))
                                  for k, v in value.pairs)
    if isinstance(value, dict):
        return '{%s}' % ', '.join('%s: %s' % (json.dumps(str(k)), dumps(v))
                                  for k, v in value.items())
    if isinstance(value, list):
        return '[%s]' % ', '.join(dumps(v) for v in value)
    return json.dumps(value)


# Query values that pass, by parameter name (before any suffix).
_QUERY_VALUES = {
    'resources': 'VCPU:1', 'required': 'CUSTOM_FUZZ',
    'member_of': 'in:' + AGGREGATE, 'in_tree': PROVIDER, 'limit': '1',
    'group_policy': 'isolate', 'root_required': '!CUSTOM_FUZZ',
    'same_subtree': '_X,_Y', 'name': 'fuzz', 'uuid': PROVIDER,
    'associated': 'true', 'project_id': 'p', 'user_id': 'u',
    'consumer_type': 'INSTANCE'}
QUERY_NASTY = st.sampled_from([
    '', '%20', '%00', '%ff', 'A' * 300, 'x' * 5000, '-1', '0', '1.5',
    '99999999999999999999', '9223372036854775808', '2147483648',
    'VCPU:-1', 'VCPU:0', 'VCPU:99999999999999999999', 'VCPU:1,VCPU:1',
    'VCPU:', ':1', 'lower:1', 'CUSTOM_NOPE:1', 'in:', 'in:,', '!', '!!',
    '!in:' + AGGREGATE, 'in:' + AGGREGATE + ',' + AGGREGATE, ',', ':',
    'CUSTOM_FUZZ,!CUSTOM_FUZZ', 'in:CUSTOM_FUZZ,!HW_CPU_X86_VMX',
    PROVIDER.upper(), PROVIDER.replace('-', ''), '-' * 36, 'true', 'none',
    'isolate', '_X', '_X,', '_' + 'X' * 70, '%25s', 'all', 'unknown'])
QUERY_EXTRA_KEYS = st.sampled_from([
    'resources', 'resources1', 'resources_X', 'resources_' + 'X' * 70,
    'resources0', 'resources_', 'required', 'required_X', 'required1',
    'member_of', 'member_of_X', 'in_tree', 'in_tree_X', 'in_tree1',
    'limit', 'group_policy', 'root_required', 'same_subtree', 'name',
    'uuid', 'project_id', 'user_id', 'consumer_type', 'associated',
    'bogus', '', '%00', '%ff', 'RESOURCES'])
_SUFFIXED = ('_X', '_Y', '1', '2')


_QUERY_VALUES_OF = {'/traits': {'name': 'in:CUSTOM_FUZZ,HW_CPU_X86_VMX'}}


def valid_query(schema, route):
    """(key, value) pairs ``schema`` (of ``route``) accepts: every
    parameter it names and two groups for each pattern it has."""
    values = dict(_QUERY_VALUES, **_QUERY_VALUES_OF.get(route, {}))
    pairs = [(key, values.get(key, 'fuzz'))
             for key in schema.get('properties', {})]
    for pattern in schema.get('patternProperties', {}):
        prefix = pattern.lstrip('^').split('(')[0]
        pairs += [(prefix + suffix, _QUERY_VALUES[prefix])
                  for suffix in _SUFFIXED
                  if re.search(pattern, prefix + suffix)][:2]
    return pairs


@st.composite
def broken_query(draw, pairs):
    """``pairs`` with one to three changed: a value replaced, a key
    dropped, added, renamed or given twice."""
    pairs = list(pairs)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(['value', 'value', 'add', 'twice',
                                     'rename', 'drop']))
        if kind == 'add' or not pairs:
            pairs.append((draw(QUERY_EXTRA_KEYS),
                          draw(st.one_of(QUERY_NASTY, st.sampled_from(
                              list(_QUERY_VALUES.values()))))))
            continue
        index = draw(st.integers(0, len(pairs) - 1))
        key, value = pairs[index]
        if kind == 'value':
            pairs[index] = (key, draw(QUERY_NASTY))
        elif kind == 'twice':
            pairs.insert(index, (key, draw(QUERY_NASTY)))
        elif kind == 'rename':
            pairs[index] = (draw(QUERY_EXTRA_KEYS), value)
        else:
            del pairs[index]
    return pairs
