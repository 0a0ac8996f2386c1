# SPDX-License-Identifier: Apache-2.0
"""Bad input is a clear 4xx, never a 500, on every database.

Each test is the smallest request of one class of 500 found by a fuzzed
corpus (issue 16); they go through the whole WSGI app in-process, on
whichever database OSC_PLACEMENT_TEST_DB_URL names (SQLite by default).
"""

import uuid as uuidlib

import orjson
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.schemas import allocation as allocation_schema
from osc_placement.server.schemas import inventory as inventory_schema
from osc_placement.server.schemas import reshaper as reshaper_schema
from tests.server import candidate_cloud
from tests.server import fixtures

VERSION = 'placement 1.39'


def call(app, method, path, body=None, version=VERSION, raw=None):
    """(status, parsed JSON body or None) of one request; ``path`` is
    sent as given (percent-escapes and all)."""
    req = webob.Request.blank(path, method=method, headers={
        'x-auth-token': 'admin', 'openstack-api-version': version})
    if body is not None or raw is not None:
        req.body = raw if raw is not None else orjson.dumps(body)
        req.content_type = 'application/json'
    resp = req.get_response(app)
    return resp.status_int, (orjson.loads(resp.body) if resp.body else None)


def detail(body):
    return body['errors'][0]['detail']


class AppTestCase(testtools.TestCase):
    """The WSGI app on a clean test database."""

    def setUp(self):
        super().setUp()
        self.db = fixtures.database()
        fixtures.reset_database(self.db)
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False)
        self.app = app_mod.make_app(conf, db=self.db)

    def call(self, method, path, body=None, **kwargs):
        return call(self.app, method, path, body, **kwargs)

    def provider(self, **inventory):
        """A new provider's uuid, with ``inventory`` ({class: record})."""
        uuid = str(uuidlib.uuid4())
        status, _ = self.call('POST', '/resource_providers',
                              {'name': uuid, 'uuid': uuid})
        self.assertEqual(200, status)
        if inventory:
            status, _ = self.call(
                'PUT', '/resource_providers/%s/inventories' % uuid,
                {'resource_provider_generation': 0,
                 'inventories': inventory})
            self.assertEqual(200, status)
        return uuid


class TestPercentInPath(AppTestCase):
    """A ``%`` in the path is text, not a format directive (upstream
    404s with the text in the message)."""

    def test_provider_subpaths_404(self):
        for sub in ('inventories', 'usages', 'traits', 'allocations',
                    'aggregates', 'inventories/VCPU'):
            for text in ('%25s', '%25d%25s', '%25(x)s', '%25'):
                status, body = self.call(
                    'GET', '/resource_providers/%s/%s' % (text, sub))
                self.assertEqual(404, status, (text, sub))
                self.assertIn(
                    'No resource provider with uuid %s found'
                    % text.replace('%25', '%'), detail(body))

    def test_inventory_writes_404(self):
        record = {'total': 1}
        for method, sub, body in (
                ('POST', 'inventories', dict(record, resource_class='VCPU')),
                ('PUT', 'inventories', {'resource_provider_generation': 0,
                                        'inventories': {'VCPU': record}}),
                ('PUT', 'traits', {'resource_provider_generation': 0,
                                   'traits': []}),
                ('DELETE', 'traits', None)):
            status, _ = self.call(method, '/resource_providers/%25s/' + sub,
                                  body)
            self.assertEqual(404, status, (method, sub))

    def test_unknown_class_messages_filled_once(self):
        """The templates that name both the path's uuid and a class."""
        uuid = self.provider()
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % uuid,
            {'resource_provider_generation': 0,
             'inventories': {'CUSTOM_NOPE': {'total': 1}}})
        self.assertEqual(400, status)
        self.assertIn('resource provider %s: No such resource class '
                      'CUSTOM_NOPE.' % uuid, detail(body))
        consumer = str(uuidlib.uuid4())
        status, body = self.call('PUT', '/allocations/' + consumer, {
            'allocations': {uuid: {'resources': {'CUSTOM_NOPE': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
        self.assertEqual(400, status)
        self.assertIn('consumer %s: No such resource class CUSTOM_NOPE.'
                      % consumer, detail(body))


class TestNotUtf8(AppTestCase):
    """Percent-escapes that are not UTF-8: 404 in a path, 400 in a query,
    each with a JSON error body (the error path itself used to fail)."""

    def test_path_404(self):
        for path in ('/resource_providers/%ff%fe', '/traits/CUSTOM_%ff',
                     '/resource_classes/CUSTOM_%c3', '/allocations/%ff',
                     '/%ff'):
            status, body = self.call('GET', path)
            self.assertEqual(404, status, path)
            self.assertEqual('Not Found', body['errors'][0]['title'])

    def test_query_400(self):
        for path in ('/resource_providers?uuid=%ff%fe',
                     '/resource_providers?%ff=1', '/traits?name=%ff',
                     '/allocation_candidates?resources=VCPU:1&x=%ff',
                     '/usages?project_id=%ff'):
            status, body = self.call('GET', path)
            self.assertEqual(400, status, path)
            self.assertIn('not UTF-8', detail(body))


class TestNul(AppTestCase):
    """A NUL byte is refused before any database, the same everywhere."""

    def test_path_404(self):
        uuid = self.provider()
        for method, path in (
                ('GET', '/traits/CUSTOM_%00'), ('PUT', '/traits/CUSTOM_%00'),
                ('DELETE', '/traits/CUSTOM_%00'),
                ('GET', '/resource_classes/CUSTOM_%00'),
                ('DELETE', '/resource_classes/CUSTOM_%00'),
                ('GET', '/resource_providers/%00'),
                ('GET', '/resource_providers/%s%%00/inventories' % uuid),
                ('GET', '/resource_providers/%s/inventories/VCPU%%00' % uuid),
                ('GET', '/allocations/%00'),
                ('DELETE', '/allocations/%00')):
            status, _ = self.call(method, path)
            self.assertEqual(404, status, (method, path))

    def test_query_400(self):
        for path in ('/resource_providers?name=a%00',
                     '/resource_providers?uuid=%00',
                     '/traits?name=in:CUSTOM_%00',
                     '/usages?project_id=p%00',
                     '/allocation_candidates?resources=VCPU:1'
                     '&member_of=%00'):
            status, body = self.call('GET', path)
            self.assertEqual(400, status, path)
            self.assertIn('NUL character', detail(body))

    def test_json_string_400(self):
        uuid = self.provider()
        consumer = str(uuidlib.uuid4())
        for method, path, body in (
                ('POST', '/resource_providers', {'name': 'a\x00b'}),
                ('PUT', '/resource_providers/' + uuid, {'name': '\x00'}),
                ('PUT', '/allocations/' + consumer, {
                    'allocations': {}, 'project_id': 'p\x00',
                    'user_id': 'u', 'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}),
                ('POST', '/resource_classes', {'name': 'CUSTOM_\x00'})):
            status, answer = self.call(method, path, body)
            self.assertEqual(400, status, (method, path))
            self.assertIn('NUL character', detail(answer))
        # Nothing was written.
        status, answer = self.call('GET', '/resource_providers')
        self.assertEqual([uuid], [p['uuid'] for p in
                                  answer['resource_providers']])


class TestDeepJson(AppTestCase):
    """JSON nested hundreds of levels: 400, not a RecursionError."""

    def test_deep_bodies_400(self):
        uuid = self.provider()
        deep = '[' * 500 + ']' * 500
        for method, path, raw in (
                ('POST', '/resource_providers', '{"name": %s}' % deep),
                ('PUT', '/resource_providers/%s/aggregates' % uuid,
                 '{"aggregates": %s, "resource_provider_generation": 0}'
                 % deep),
                ('PUT', '/resource_providers/%s/aggregates' % uuid,
                 '{"a":' * 400 + '1' + '}' * 400)):
            status, body = self.call(method, path, raw=raw.encode())
            self.assertEqual(400, status, (method, path))
            self.assertIn('nested deeper than 32 levels', detail(body))


class TestHugeAmounts(AppTestCase):
    """An amount no inventory can serve matches nothing: 200, empty."""

    def setUp(self):
        super().setUp()
        self.full = self.provider(VCPU={'total': 2147483647})
        status, _ = self.call('PUT', '/traits/CUSTOM_HUGE')
        self.assertEqual(201, status)
        status, _ = self.call(
            'PUT', '/resource_providers/%s/traits' % self.full,
            {'resource_provider_generation': 1, 'traits': ['CUSTOM_HUGE']})
        self.assertEqual(200, status)

    def candidates(self, query):
        status, body = self.call('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, status, query)
        return body['allocation_requests']

    def test_providers_empty(self):
        for amount in ('2147483648', '9223372036854775808',
                       '99999999999999999999'):
            status, body = self.call(
                'GET', '/resource_providers?resources=VCPU:' + amount)
            self.assertEqual(200, status, amount)
            self.assertEqual([], body['resource_providers'])

    def test_candidates_empty(self):
        for amount in ('2147483648', '9223372036854775808',
                       '99999999999999999999'):
            for extra in ('', '&required=CUSTOM_HUGE'):
                self.assertEqual([], self.candidates(
                    'resources=VCPU:%s%s' % (amount, extra)))

    def test_room_test_with_usage_does_not_overflow(self):
        """Usage plus the largest amount is past 32 bits: still a plain
        no (and the amount that fits still fits)."""
        status, _ = self.call('PUT', '/allocations/' + str(uuidlib.uuid4()), {
            'allocations': {self.full: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
        self.assertEqual(204, status)
        self.assertEqual([], self.candidates(
            'required=CUSTOM_HUGE&resources=VCPU:2147483647'))
        self.assertEqual(1, len(self.candidates(
            'required=CUSTOM_HUGE&resources=VCPU:2147483646')))


class TestCapacityPast64Bits(AppTestCase):
    """A capacity past 64 bits is written out whole, as upstream's
    ``int((total - reserved) * allocation_ratio)``."""

    def test_candidates_200(self):
        self.check_candidates()

    def test_candidates_200_read_in_windows(self):
        """Read in windows (a large cloud before its structure is kept,
        or on MySQL) the summaries are never written ahead: the body is
        plain dicts for the standard library's encoder."""
        candidate_cloud.read_in_windows(self, 1)
        self.check_candidates()

    def check_candidates(self):
        uuid = self.provider(DISK_GB={'total': 2147483647,
                                      'allocation_ratio': 3.4e38})
        status, body = self.call(
            'GET', '/allocation_candidates?resources=DISK_GB:2147483647')
        self.assertEqual(200, status)
        self.assertEqual(
            [{'allocations': {uuid: {'resources': {'DISK_GB': 2147483647}}},
              'mappings': {'': [uuid]}}],
            body['allocation_requests'])
        summary = body['provider_summaries'][uuid]['resources']['DISK_GB']
        self.assertEqual({'capacity': int(2147483647 * 3.4e38), 'used': 0},
                         summary)


class TestLongLists(AppTestCase):
    """Lists past psycopg's 65,535 parameters per statement are read and
    written as shorter ones are, on every database (upstream, binding
    client-side, has no such limit)."""

    COUNT = 65536 + 100

    def test_unknown_traits_400(self):
        uuid = self.provider()
        names = ['CUSTOM_T%d' % i for i in range(self.COUNT)]
        status, body = self.call(
            'PUT', '/resource_providers/%s/traits' % uuid,
            {'resource_provider_generation': 0, 'traits': names})
        self.assertEqual(400, status)
        self.assertIn('No such trait', detail(body))
        status, body = self.call(
            'GET', '/traits?name=in:' + ','.join(names))
        self.assertEqual((200, []), (status, body['traits']))

    def test_aggregates_put_and_filter(self):
        uuid = self.provider()
        aggs = sorted(str(uuidlib.uuid4()) for _ in range(self.COUNT))
        status, body = self.call(
            'PUT', '/resource_providers/%s/aggregates' % uuid,
            {'resource_provider_generation': 0, 'aggregates': aggs})
        self.assertEqual(200, status)
        self.assertEqual(aggs, sorted(body['aggregates']))
        status, body = self.call(
            'GET', '/resource_providers?member_of=in:' + ','.join(aggs))
        self.assertEqual([uuid], [p['uuid'] for p in
                                  body['resource_providers']])
        # And away again: the delete names them all.
        status, body = self.call(
            'PUT', '/resource_providers/%s/aggregates' % uuid,
            {'resource_provider_generation': 1, 'aggregates': []})
        self.assertEqual((200, []), (status, body['aggregates']))


class TestUsagePast32Bits(AppTestCase):
    """Summed usage past 2**31 - 1 (allocation_ratio above 1): written,
    shown, and the provider stays usable (upstream 204s)."""

    def allocate(self, uuid, amount):
        return self.call('PUT', '/allocations/' + str(uuidlib.uuid4()), {
            'allocations': {uuid: {'resources': {'VCPU': amount}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})[0]

    def test_two_full_consumers(self):
        uuid = self.provider(VCPU={'total': 2147483647,
                                   'allocation_ratio': 2.0})
        self.assertEqual(204, self.allocate(uuid, 2147483647))
        self.assertEqual(204, self.allocate(uuid, 2147483647))
        # Full now: one more is a conflict, not an error.
        self.assertEqual(409, self.allocate(uuid, 1))
        status, body = self.call('GET',
                                 '/resource_providers/%s/usages' % uuid)
        self.assertEqual((200, {'VCPU': 4294967294}),
                         (status, body['usages']))
        status, body = self.call('GET', '/usages?project_id=p')
        self.assertEqual(4294967294, body['usages']['INSTANCE']['VCPU'])
        status, body = self.call('GET', '/allocation_candidates?'
                                 'resources=VCPU:1')
        self.assertEqual((200, []), (status, body['allocation_requests']))


class TestInventoryKeyNotAClass(AppTestCase):
    """A key of ``inventories`` that is no class name, with a value that
    is not an inventory record: 400 naming the key, nothing changed
    (issue 38; it was a 500, as it is upstream)."""

    def put_inventories(self, uuid, inventories):
        return self.call('PUT', '/resource_providers/%s/inventories' % uuid,
                         {'resource_provider_generation': 1,
                          'inventories': inventories})

    def assert_unchanged(self, uuid):
        status, body = self.call(
            'GET', '/resource_providers/%s/inventories' % uuid)
        self.assertEqual(200, status)
        self.assertEqual(1, body['resource_provider_generation'])
        self.assertEqual({'VCPU': 8}, {name: record['total'] for name, record
                                       in body['inventories'].items()})

    def test_not_a_record_400(self):
        uuid = self.provider(VCPU={'total': 8})
        for key, value in (('consumer_generation', 'x'), ('lower_case', 1),
                           ('lower_case', None), ('lower_case', [1]),
                           ('', {}), ('lower', {'bogus': 1}),
                           ('lower', {'total': 'x'})):
            status, body = self.put_inventories(
                uuid, {'VCPU': {'total': 4}, key: value})
            self.assertEqual(400, status, (key, value))
            self.assertEqual('Bad Request', body['errors'][0]['title'])
            self.assertEqual('placement.undefined_code',
                             body['errors'][0]['code'])
            self.assertIn('JSON does not validate', detail(body))
            self.assertIn("On instance['inventories']['%s']" % key,
                          detail(body))
            self.assert_unchanged(uuid)

    def test_record_under_unknown_name_keeps_upstream_400(self):
        # A well-formed record under a name that is no class still gets
        # upstream's own text, not a schema error.
        uuid = self.provider(VCPU={'total': 8})
        status, body = self.put_inventories(
            uuid, {'VCPU': {'total': 4}, 'lower_case': {'total': 1}})
        self.assertEqual(400, status)
        self.assertIn('Unknown resource class in inventory', detail(body))
        self.assert_unchanged(uuid)


class TestGenerationInARecord(AppTestCase):
    """Upstream's inventory record in a set (and in the reshaper) allows
    a ``resource_provider_generation`` of its own, and ignores it."""

    def test_set_all(self):
        uuid = self.provider()
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % uuid,
            {'resource_provider_generation': 0,
             'inventories': {'VCPU': {'total': 4,
                                      'resource_provider_generation': 9}}})
        self.assertEqual(200, status, body)
        self.assertEqual(1, body['resource_provider_generation'])

    def test_reshaper(self):
        uuid = self.provider()
        req = webob.Request.blank('/reshaper', method='POST', headers={
            'x-auth-token': 'admin', 'x-roles': 'admin,service',
            'openstack-api-version': VERSION})
        req.body = orjson.dumps({
            'inventories': {uuid: {
                'resource_provider_generation': 0,
                'inventories': {'VCPU': {
                    'total': 4, 'resource_provider_generation': 9}}}},
            'allocations': {}})
        req.content_type = 'application/json'
        resp = req.get_response(self.app)
        self.assertEqual(204, resp.status_int, resp.body)


class TestNoUncheckedKeys(testtools.TestCase):
    """Every object of a body schema says what a key its patterns do not
    match may hold (``additionalProperties``), or the guard checked after
    upstream's schema does: a key no pattern names cannot reach a handler
    unchecked, as in issue 38. Mappings (1.34) are the one exception, as
    upstream's: they are accepted and ignored."""

    def open_maps(self, schema, where):
        if isinstance(schema, dict):
            if ('patternProperties' in schema
                    and 'additionalProperties' not in schema
                    and schema != allocation_schema.MAPPINGS):
                yield where
            for key, sub in schema.items():
                yield from self.open_maps(sub, where + '/' + str(key))
        elif isinstance(schema, (list, tuple)):
            for index, sub in enumerate(schema):
                yield from self.open_maps(sub, where + '/' + str(index))

    def test_body_schemas(self):
        tables = {
            'inventory.CREATE': inventory_schema.CREATE,
            'inventory.UPDATE_ONE': inventory_schema.UPDATE_ONE,
            'inventory.SET_ALL_GUARD': inventory_schema.SET_ALL_GUARD,
            'allocation.PUT': allocation_schema.PUT,
            'allocation.POST': allocation_schema.POST,
            'reshaper.GUARD': reshaper_schema.GUARD,
        }
        found = [where for name, schema in tables.items()
                 for where in self.open_maps(schema, name)]
        self.assertEqual([], found)
