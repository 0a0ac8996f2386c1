# SPDX-License-Identifier: Apache-2.0
"""Malformed requests over every route and method: never a 5xx.

Hypothesis draws requests from osc_placement/server/routes.py's table and
sends each through the WSGI app in-process; every answer must be below
500. Two kinds of test:

- ``TestShapedRequests``: one test per route that takes a body or a query
  schema. The route's own schemas (osc_placement/server/schemas) are the
  map: a body or query they accept at a version where the shape changes,
  naming the seeded objects, broken at one to three places at any depth
  (tests/server/fuzz_shapes.py).
- ``TestNoServerErrors``: any route and method, with path variables that
  name real objects or are junk (``%``, NUL, escapes that are not UTF-8,
  very long text), query strings of known and unknown keys, version and
  content headers, and bodies that are a shaped one broken, any JSON or
  junk bytes.

Seeded and bounded for CI: each shaped test draws FUZZ_EXAMPLES requests
(60 unless OSC_PLACEMENT_FUZZ_EXAMPLES says otherwise), the any-route
test three times as many, the same ones every run unless
OSC_PLACEMENT_FUZZ_SEED names another seed (see
doc/source/contributor/index.rst for a longer run);
OSC_PLACEMENT_FUZZ_LOG names a file to which each test appends a JSON
line: the requests it sent and their statuses. Runs on whichever database
OSC_PLACEMENT_TEST_DB_URL names (SQLite by default).
"""

import collections
import json
import os
import re
import urllib.parse
import uuid as uuidlib

import hypothesis
from hypothesis import strategies as st
import jsonschema
import testtools
import webob

from osc_placement.server import microversion
from osc_placement.server import routes
from osc_placement.server import schemas
from tests.server import fuzz_shapes as shapes
from tests.server import test_bad_input

FUZZ_EXAMPLES = int(os.environ.get('OSC_PLACEMENT_FUZZ_EXAMPLES', '60'))
FUZZ_SEED = int(os.environ.get('OSC_PLACEMENT_FUZZ_SEED', '0'))
SETTINGS = hypothesis.settings(
    max_examples=FUZZ_EXAMPLES, derandomize=False, deadline=None,
    database=None, suppress_health_check=list(hypothesis.HealthCheck))

# One time in eight; drawn from a list so that the common case is the
# one hypothesis tries first and shrinks towards.
RARELY = st.sampled_from([False] * 7 + [True])

ROUTES = [(template, method) for template, methods in routes.ROUTES
          for method in methods]
PROVIDER, CONSUMER = shapes.PROVIDER, shapes.CONSUMER
AGGREGATE = shapes.AGGREGATE
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
QUERY_KEYS = st.sampled_from([
    'resources', 'resources1', 'resources_X', 'required', 'required1',
    'member_of', 'member_of1', 'in_tree', 'in_tree1', 'limit',
    'group_policy', 'root_required', 'same_subtree', 'name', 'uuid',
    'project_id', 'user_id', 'consumer_type', 'associated', 'resourcesA',
    'requiredB', 'bogus', '%ff', '%00', ''])

HUGE = st.sampled_from(shapes.HUGE)
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


def _deep(levels):
    return ('{"a":' * levels + '1' + '}' * levels).encode()


def _gate(template, method):
    """The rule a route's method starts at (its Since step, else base)."""
    steps = dict(routes.ROUTES)[template][method]
    return next((step.rule for step in steps
                 if isinstance(step, routes.Since)), 'base')


def _at_or_after_gate(versions, template, method):
    since = microversion.SINCE[_gate(template, method)]
    return sorted({max(version, since) for version in versions})


@st.composite
def shaped_body(draw, template, method, version):
    """A body of the route's schema at ``version`` broken somewhere (the
    last schema before, where the version takes none), or once in eight
    left whole (a write that succeeds changes what later ones meet)."""
    table = shapes.BODY_SCHEMAS[(template, method)]
    schema = shapes.schema_at(table, version) or next(
        (schema for _, schema in reversed(table) if schema), None)
    body = shapes.valid(schema)
    return body if draw(RARELY) else draw(shapes.broken(body))


@st.composite
def bodies(draw, template, method, version):
    """A body to send, or None for no body: shaped (mostly), any JSON,
    or junk bytes."""
    shaped = (template, method) in shapes.BODY_SCHEMAS
    kind = draw(st.sampled_from(['shaped'] * 6 + ['any', 'none', 'raw']))
    if kind == 'none' or (not shaped and draw(st.booleans())):
        return None
    if kind == 'raw':
        return draw(st.sampled_from([
            b'', b'{', b'[]', b'null', b'"x"', b'{"a":}', b'\xff\xfe',
            b'{"name": "\\u0000"}', _deep(600), b'[' * 1000 + b']' * 1000,
            b'{"a": 1e999}', b'{"a": 123456789012345678901234567890}']))
    if kind == 'any' or not shaped:
        return draw(JSON_ANY)
    return draw(shaped_body(template, method, version))


def _fill_path(draw, template):
    path = template
    for var in ('uuid', 'consumer_uuid', 'name', 'resource_class'):
        if '{%s}' % var in path:
            value = draw(TEXT) if draw(RARELY) else KNOWN[var]
            path = path.replace('{%s}' % var, value)
    return path


def _with_query(path, pairs):
    if pairs:
        path += '?' + '&'.join('%s=%s' % pair for pair in pairs)
    return path


def _headers(version, body):
    # The service role too: the reshaper is a service's alone.
    headers = {'x-auth-token': 'admin', 'x-roles': 'admin,service',
               'openstack-api-version': 'placement ' + str(version)}
    if body is not None:
        headers['content-type'] = 'application/json'
    return headers


@st.composite
def shaped_body_requests(draw, template, method):
    """A request to one body route at a version where its body's shape
    changes (or, about one time in four, any version): (method, path, headers,
    body or None)."""
    table = shapes.BODY_SCHEMAS[(template, method)]
    changes = _at_or_after_gate(shapes.body_versions(table), template,
                                method)
    version = draw(st.sampled_from(changes) if not draw(RARELY) and
                   not draw(RARELY) else st.sampled_from(microversion.KNOWN))
    body = draw(shaped_body(template, method, version))
    return (method, _fill_path(draw, template), _headers(version, body),
            body)


@st.composite
def shaped_query_requests(draw, template):
    """A GET of one route with a query its schema accepts at a version
    where the schema changes, broken: (method, path, headers, None)."""
    schema_of = shapes.QUERY_SCHEMAS[template]
    version = draw(st.sampled_from(_at_or_after_gate(
        shapes.query_versions(schema_of), template, 'GET')))
    pairs = shapes.valid_query(schema_of(version), template)
    if not draw(RARELY):
        pairs = draw(shapes.broken_query(pairs))
    return ('GET', _with_query(template, pairs), _headers(version, None),
            None)


@st.composite
def requests(draw):
    """Any route and method: (method, path with query, headers, body or
    None)."""
    template, method = draw(st.sampled_from(ROUTES))
    if draw(RARELY):
        method = draw(st.sampled_from(['PATCH', 'HEAD', 'OPTIONS', 'GET',
                                       'DELETE']))
    path = _fill_path(draw, template)
    pairs = []
    schema_of = shapes.QUERY_SCHEMAS.get(template)
    if schema_of and draw(st.booleans()):
        pairs = shapes.valid_query(schema_of(microversion.MAX_VERSION),
                                   template)
        pairs = [(key, draw(VALUES)) for key, _ in pairs]
    pairs += draw(st.lists(st.tuples(QUERY_KEYS, VALUES), max_size=4))
    path = _with_query(path, pairs)
    if not draw(RARELY):
        version = draw(st.sampled_from(
            list(microversion.KNOWN) + [microversion.MAX_VERSION] * 10))
        header = 'placement ' + str(version)
    else:
        version = microversion.MAX_VERSION
        header = draw(st.sampled_from([
            'placement 1.999', 'placement 2.0', 'placement 1.x', 'placement',
            'placement 1.-1', 'nova 1.2', '', 'placement 1.%00']))
    headers = {'x-auth-token': 'admin', 'x-roles': 'admin,service',
               'openstack-api-version': header}
    accept = draw(st.sampled_from([None] * 10 + [
        'application/json', 'text/html', 'text/plain', '*/*', 'x/y;q=bad']))
    if accept:
        headers['accept'] = accept
    body = draw(bodies(template, method, version))
    if body is not None:
        headers['content-type'] = draw(st.sampled_from([
            'application/json'] * 12 + ['text/plain', '', 'application/json;'
                                        ' charset=latin-1']))
    return method, path, headers, body


class FuzzCase(test_bad_input.AppTestCase):
    """The seeded objects, a request sent with its generations read just
    before, and the statuses counted for OSC_PLACEMENT_FUZZ_LOG."""

    def setUp(self):
        super().setUp()
        self.assertEqual([200, 200, 201, 201, 204], self.seed_objects())
        self.statuses = collections.Counter()
        self.addCleanup(self.log_statuses)

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
        statuses.append(self.call(
            'PUT', '/allocations/' + CONSUMER,
            {'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
             'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
             'consumer_type': 'INSTANCE'})[0])
        return statuses

    def live(self, what):
        """The seeded provider's or consumer's generation now."""
        if what == 'provider':
            status, body = self.call('GET', '/resource_providers/' + PROVIDER)
            return body['generation'] if status == 200 else 0
        status, body = self.call('GET', '/allocations/' + CONSUMER,
                                 version='placement 1.28')
        return body.get('consumer_generation') if status == 200 else None

    def send(self, method, path, headers, body):
        req = webob.Request.blank(path, method=method, headers=headers)
        if body is not None:
            req.body = (body if isinstance(body, bytes) else shapes.dumps(
                shapes.resolve(body, self.live)).encode())
        return req.get_response(self.app)

    def check(self, request):
        method, path, headers, body = request
        resp = self.send(method, path, headers, body)
        self.statuses[resp.status_int] += 1
        self.assertLess(resp.status_int, 500, (request, resp.body[:2000]))
        if method != 'GET' and resp.status_int < 300:
            self.seed_objects()

    def log_statuses(self):
        name = os.environ.get('OSC_PLACEMENT_FUZZ_LOG')
        if name:
            with open(name, 'a') as log:
                log.write(json.dumps({
                    'test': self.id(), 'seed': FUZZ_SEED,
                    'database': self.db.engine.dialect.name,
                    'requests': sum(self.statuses.values()),
                    'statuses': dict(sorted(self.statuses.items()))}) + '\n')


def _fuzz_test(strategy, examples=FUZZ_EXAMPLES):
    @hypothesis.settings(SETTINGS, max_examples=examples)
    @hypothesis.seed(FUZZ_SEED)
    @hypothesis.given(strategy)
    def test(self, request):
        self.check(request)
    return test


class TestNoServerErrors(FuzzCase):
    """Any route and method, with any headers and bodies."""

    # Its space is every route's: three times a shaped test's share.
    test_no_5xx = _fuzz_test(requests(), 3 * FUZZ_EXAMPLES)


class TestShapedRequests(FuzzCase):
    """Each body and query the API takes, broken inside (one test each,
    added below)."""


def _test_name(method, template):
    words = re.findall('[a-z_]+', template.replace('{', '').lower())
    return 'test_%s_%s' % (method.lower(), '_'.join(words) or 'root')


for _template, _method in shapes.BODY_SCHEMAS:
    setattr(TestShapedRequests, _test_name(_method, _template),
            _fuzz_test(shaped_body_requests(_template, _method)))
for _template in shapes.QUERY_SCHEMAS:
    setattr(TestShapedRequests, _test_name('GET', _template) + '_query',
            _fuzz_test(shaped_query_requests(_template)))


class TestShapesCoverTheApi(testtools.TestCase):
    """The map is the API's: a new body or query route must join it."""

    def test_every_body_route_has_schemas(self):
        takes_body = {(template, method)
                      for template, methods in routes.ROUTES
                      for method, steps in methods.items()
                      if routes._BODY in steps}
        # PUT of a resource class checks its body in the handler (before
        # 1.7 only).
        takes_body.add(('/resource_classes/{name}', 'PUT'))
        self.assertEqual(takes_body, set(shapes.BODY_SCHEMAS))

    def test_valid_shapes_pass_their_schemas(self):
        for (template, method), table in shapes.BODY_SCHEMAS.items():
            for version in shapes.body_versions(table):
                schema = shapes.schema_at(table, version)
                if schema is not None:
                    body = shapes.resolve(shapes.valid(schema),
                                          lambda what: 1)
                    schemas.validate(json.loads(shapes.dumps(body)), schema,
                                     '%s', jsonschema.FormatChecker())
        for template, schema_of in shapes.QUERY_SCHEMAS.items():
            for version in shapes.query_versions(schema_of):
                schemas.validate(
                    dict(shapes.valid_query(schema_of(version), template)),
                    schema_of(version), '%s', jsonschema.FormatChecker())
