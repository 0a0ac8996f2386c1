"""Malformed requests over every route and method: never a 5xx.

Hypothesis draws requests from osc_placement/server/routes.py's table --
path variables that name real objects or are junk (``%``, NUL, escapes
that are not UTF-8, very long text), query strings of known and unknown
keys with bad values, microversion and content headers, and JSON bodies
that are a valid one mutated (keys dropped or added, values of the wrong
type, huge integers, NUL, deep nesting) or junk bytes -- and sends each
through the WSGI app in-process. Every answer must be below 500.

Seeded and bounded for CI: FUZZ_EXAMPLES examples (200 unless
OSC_PLACEMENT_FUZZ_EXAMPLES says more), the same ones every run unless
OSC_PLACEMENT_FUZZ_SEED names another seed (see
doc/source/contributor/index.rst for a longer run). Runs on whichever
database OSC_PLACEMENT_TEST_DB_URL names (SQLite by default).
"""

import json
import os
import urllib.parse
import uuid as uuidlib

import hypothesis
from hypothesis import strategies as st
import webob

from osc_placement.server import microversion
from osc_placement.server import routes
from tests.server import test_bad_input

FUZZ_EXAMPLES = int(os.environ.get('OSC_PLACEMENT_FUZZ_EXAMPLES', '200'))
FUZZ_SEED = int(os.environ.get('OSC_PLACEMENT_FUZZ_SEED', '0'))
SETTINGS = hypothesis.settings(
    max_examples=FUZZ_EXAMPLES, derandomize=False, deadline=None,
    database=None, suppress_health_check=list(hypothesis.HealthCheck))

# One time in eight; drawn from a list so that the common case is the
# one hypothesis tries first and shrinks towards.
RARELY = st.sampled_from([False] * 7 + [True])

ROUTES = [(template, method) for template, methods in routes.ROUTES
          for method in methods]
PROVIDER = '5b3a8a8e-2d3f-4b8e-9d55-2b6a1f4d0c01'
CONSUMER = '7c1d9e2a-8f3b-4c6d-a5e4-3b2c1d0e9f08'
AGGREGATE = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b'
KNOWN = {'uuid': PROVIDER, 'consumer_uuid': CONSUMER,
         'name': 'CUSTOM_FUZZ', 'resource_class': 'VCPU'}

# Text that has broken servers: format directives, NUL, bytes that are
# not UTF-8 once unescaped, escapes cut short, huge numbers, long text.
NASTY_TEXT = st.sampled_from([
    '%25s', '%25d%25s', '%25(x)s', '%25', '%', '%00', 'CUSTOM_%00',
    '%ff%fe', '%c3', '%e2%82', '%zz', '%2', '..', '.', '%2F', '%20',
    '99999999999999999999', '9223372036854775808', '-1', '0', '1.5',
    'null', 'true', '[]', '{}', 'in:', 'in:,', '!', '!!', ',', ':', ':1',
    'VCPU:', 'VCPU:0', 'VCPU:-1', 'VCPU:99999999999999999999',
    'VCPU:9223372036854775808', 'VCPU:2147483648', 'A' * 300,
    'CUSTOM_' + 'X' * 300, str(uuidlib.UUID(int=0)), PROVIDER.upper(),
    PROVIDER.replace('-', ''), '%c3%a9', '%e2%98%83', 'CUSTOM_FUZZ',
    AGGREGATE, 'in:' + AGGREGATE, '!in:' + AGGREGATE, 'isolate', 'none'])
TEXT = st.one_of(NASTY_TEXT, st.text(max_size=20).map(urllib.parse.quote),
                 st.binary(max_size=8).map(urllib.parse.quote_from_bytes))

# Values that parse, so that a request gets past its first check often
# enough to reach the handlers' deeper paths.
GOOD_VALUES = st.sampled_from([
    'VCPU:1', 'VCPU:1,DISK_GB:1', 'CUSTOM_FUZZ:1', 'CUSTOM_FUZZ',
    '!CUSTOM_FUZZ', 'in:CUSTOM_FUZZ,HW_CPU_X86_VMX', 'HW_CPU_X86_VMX',
    AGGREGATE, 'in:' + AGGREGATE, '!' + AGGREGATE, PROVIDER, '1', '10',
    'isolate', 'none', 'fuzz', 'p', 'u', 'INSTANCE', 'true', 'false',
    '_X', '_X,', ''])
VALUES = st.one_of(GOOD_VALUES, GOOD_VALUES, TEXT)
# A query each reading route answers, for the mutations to start from.
VALID_QUERIES = {
    '/allocation_candidates': [('resources', 'VCPU:1')],
    '/usages': [('project_id', 'p')],
}
QUERY_KEYS = st.sampled_from([
    'resources', 'resources1', 'resources_X', 'required', 'required1',
    'member_of', 'member_of1', 'in_tree', 'in_tree1', 'limit',
    'group_policy', 'root_required', 'same_subtree', 'name', 'uuid',
    'project_id', 'user_id', 'consumer_type', 'associated', 'resourcesA',
    'requiredB', 'bogus', '%ff', '%00', ''])

HUGE = st.sampled_from([2 ** 31, 2 ** 63, 2 ** 64 + 1, -2 ** 63 - 1,
                        10 ** 30, 3.4e38, -1, 0, 1.5, float(2 ** 70)])
JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), HUGE,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.just('\x00'), st.just('CUSTOM_\x00'),
    st.just(PROVIDER), st.just(AGGREGATE), st.just('VCPU'))
JSON_ANY = st.recursive(
    JSON_LEAF, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(
            ['name', 'uuid', 'total', 'VCPU', PROVIDER, 'traits',
             'resources', 'allocations', 'generation'])), inner,
            max_size=4)),
    max_leaves=12)


def _allocation(generation=None):
    return {'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': generation, 'consumer_type': 'INSTANCE'}


# One valid body per writing route, for the mutations to start from.
VALID_BODIES = {
    ('/resource_classes', 'POST'): {'name': 'CUSTOM_NEW'},
    ('/resource_classes/{name}', 'PUT'): {'name': 'CUSTOM_NEW'},
    ('/resource_providers', 'POST'): {'name': 'new', 'uuid': PROVIDER,
                                      'parent_provider_uuid': None},
    ('/resource_providers/{uuid}', 'PUT'): {'name': 'renamed',
                                            'parent_provider_uuid': None},
    ('/resource_providers/{uuid}/inventories', 'POST'): {
        'resource_class': 'DISK_GB', 'total': 10, 'reserved': 0,
        'min_unit': 1, 'max_unit': 10, 'step_size': 1,
        'allocation_ratio': 1.0},
    ('/resource_providers/{uuid}/inventories', 'PUT'): {
        'resource_provider_generation': 1,
        'inventories': {'VCPU': {'total': 8}}},
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'PUT'): {
        'resource_provider_generation': 1, 'total': 8},
    ('/resource_providers/{uuid}/aggregates', 'PUT'): {
        'resource_provider_generation': 1, 'aggregates': [AGGREGATE]},
    ('/resource_providers/{uuid}/traits', 'PUT'): {
        'resource_provider_generation': 1, 'traits': ['CUSTOM_FUZZ']},
    ('/allocations', 'POST'): {CONSUMER: _allocation(1)},
    ('/allocations/{consumer_uuid}', 'PUT'): _allocation(1),
    ('/reshaper', 'POST'): {
        'inventories': {PROVIDER: {'resource_provider_generation': 1,
                                   'inventories': {'VCPU': {'total': 8}}}},
        'allocations': {CONSUMER: _allocation(1)}},
}


@st.composite
def mutated(draw, value, depth=0):
    """``value`` with some of its parts replaced, dropped or added."""
    choice = draw(st.sampled_from(['keep'] * 6 + ['leaf', 'any']))
    if choice == 'any' or depth > 4:
        return draw(JSON_ANY)
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            action = draw(st.sampled_from(['keep', 'keep', 'mutate', 'drop']))
            if action == 'drop':
                continue
            result[key] = (draw(mutated(item, depth + 1))
                           if action == 'mutate' else item)
        if draw(RARELY):
            result[draw(st.text(max_size=8))] = draw(JSON_LEAF)
        return result
    if isinstance(value, list):
        return [draw(mutated(item, depth + 1)) for item in value] + draw(
            st.lists(JSON_LEAF, max_size=2))
    return draw(JSON_LEAF) if choice == 'leaf' else value


def _deep(levels):
    return ('{"a":' * levels + '1' + '}' * levels).encode()


@st.composite
def bodies(draw, template, method):
    """Raw body bytes, or None for no body."""
    valid = VALID_BODIES.get((template, method))
    kind = draw(st.sampled_from(['mutated'] * 6 + ['any', 'none', 'raw']))
    if kind == 'none' or (valid is None and draw(st.booleans())):
        return None
    if kind == 'raw':
        return draw(st.sampled_from([
            b'', b'{', b'[]', b'null', b'"x"', b'{"a":}', b'\xff\xfe',
            b'{"name": "\\u0000"}', _deep(600), b'[' * 1000 + b']' * 1000,
            b'{"a": 1e999}', b'{"a": 123456789012345678901234567890}']))
    if kind == 'any' or valid is None:
        return _dumps(draw(JSON_ANY))
    return _dumps(draw(mutated(valid)))


def _dumps(value):
    # The standard library: orjson refuses integers past 64 bits, which
    # are exactly what a client may send.
    return json.dumps(value).encode()


@st.composite
def requests(draw):
    """(method, path with query, headers, body or None)."""
    template, method = draw(st.sampled_from(ROUTES))
    if draw(RARELY):
        method = draw(st.sampled_from(['PATCH', 'HEAD', 'OPTIONS', 'GET',
                                       'DELETE']))
    path = template
    for var in ('uuid', 'consumer_uuid', 'name', 'resource_class'):
        if '{%s}' % var in path:
            value = draw(TEXT) if draw(RARELY) else KNOWN[var]
            path = path.replace('{%s}' % var, value)
    pairs = list(VALID_QUERIES.get(template, []))
    if pairs and draw(st.booleans()):
        pairs = [(key, draw(VALUES)) for key, _ in pairs]
    pairs += draw(st.lists(st.tuples(QUERY_KEYS, VALUES), max_size=4))
    if pairs:
        path += '?' + '&'.join('%s=%s' % pair for pair in pairs)
    if not draw(RARELY):
        version = draw(st.sampled_from(
            ['placement ' + str(version) for version in microversion.KNOWN]
            + ['placement latest'] * 10))
    else:
        version = draw(st.sampled_from([
            'placement 1.999', 'placement 2.0', 'placement 1.x', 'placement',
            'placement 1.-1', 'nova 1.2', '', 'placement 1.%00']))
    headers = {'x-auth-token': 'admin', 'openstack-api-version': version}
    accept = draw(st.sampled_from([None] * 10 + [
        'application/json', 'text/html', 'text/plain', '*/*', 'x/y;q=bad']))
    if accept:
        headers['accept'] = accept
    body = draw(bodies(template, method))
    if body is not None:
        headers['content-type'] = draw(st.sampled_from([
            'application/json'] * 12 + ['text/plain', '', 'application/json;'
                                        ' charset=latin-1']))
    return method, path, headers, body


class TestNoServerErrors(test_bad_input.AppTestCase):

    def setUp(self):
        super().setUp()
        self.assertEqual([200, 200, 201, 201, 204], self.seed_objects())

    def seed_objects(self):
        """A provider with inventory, a consumer on it, a custom trait
        and class: the known names the requests may use. Run again after
        each write, to put back what it deleted; the statuses."""
        statuses = [self.call('POST', '/resource_providers', {
            'name': 'fuzz', 'uuid': PROVIDER})[0]]
        if statuses[0] == 200:
            statuses.append(self.call(
                'PUT', '/resource_providers/%s/inventories' % PROVIDER,
                {'resource_provider_generation': 0,
                 'inventories': {'VCPU': {'total': 8}}})[0])
        statuses.append(self.call('PUT', '/traits/CUSTOM_FUZZ')[0])
        statuses.append(self.call('PUT', '/resource_classes/CUSTOM_FUZZ',
                                  version='placement 1.7')[0])
        statuses.append(self.call('PUT', '/allocations/' + CONSUMER,
                                  _allocation())[0])
        return statuses

    def send(self, method, path, headers, body):
        req = webob.Request.blank(path, method=method, headers=headers)
        if body is not None:
            req.body = body
        return req.get_response(self.app)

    @SETTINGS
    @hypothesis.seed(FUZZ_SEED)
    @hypothesis.given(requests())
    def test_no_5xx(self, request):
        method, path, headers, body = request
        resp = self.send(method, path, headers, body)
        self.assertLess(resp.status_int, 500, (request, resp.body[:2000]))
        if method != 'GET' and resp.status_int < 300:
            self.seed_objects()
