# SPDX-License-Identifier: Apache-2.0
"""The last visible differences from upstream Placement: the order of
names in messages and lists, the text of some errors, error bodies in the
representation the client accepts, and empty-allocation consumers."""

import json
import uuid as uuidlib

import fixtures
import testtools
import webob
import webob.exc

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import fixtures as api_fixtures


class ApiTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = api_fixtures.database()
        api_fixtures.reset_database(self.db)
        self.app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=self.db)

    def request(self, method, path, body=None, headers=None):
        """The whole webob response."""
        all_headers = {'X-Auth-Token': 'admin',
                       'OpenStack-API-Version': 'placement latest'}
        all_headers.update(headers or {})
        req = webob.Request.blank(path, method=method, headers=all_headers)
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def call(self, method, path, body=None, headers=None):
        resp = self.request(method, path, body, headers)
        return resp.status_int, (resp.json if resp.body else None)

    def provider(self, name, inventories=None):
        status, body = self.call('POST', '/resource_providers',
                                 {'name': name})
        self.assertEqual(200, status, body)
        if inventories:
            self.set_inventory(body['uuid'], 0, inventories)
        return body['uuid']

    def set_inventory(self, uuid, generation, inventories):
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % uuid,
            {'resource_provider_generation': generation,
             'inventories': inventories})
        self.assertEqual(200, status, body)

    def claim(self, allocations, consumer=None, generation=None):
        consumer = consumer or str(uuidlib.uuid4())
        body = {'allocations': {rp: {'resources': res}
                                for rp, res in allocations.items()},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': generation,
                'consumer_type': 'INSTANCE'}
        return self.call('PUT', '/allocations/%s' % consumer, body)

    def detail(self, body):
        return body['errors'][0]['detail']


class TestInUseOrder(ApiTestCase):
    """Upstream names the busy classes in class id order (its query
    groups by resource_class_id): standard classes in their fixed order,
    custom ones after them by creation."""

    def setUp(self):
        super().setUp()
        status, _ = self.call('PUT', '/resource_classes/CUSTOM_AAA')
        self.assertEqual(201, status)
        self.rp = self.provider('busy', {
            'DISK_GB': {'total': 10}, 'VCPU': {'total': 4},
            'CUSTOM_AAA': {'total': 2}, 'MEMORY_MB': {'total': 64}})
        status, body = self.claim({self.rp: {
            'DISK_GB': 1, 'VCPU': 1, 'CUSTOM_AAA': 1}})
        self.assertEqual(204, status, body)

    def test_delete_all_inventories(self):
        status, body = self.call(
            'DELETE', '/resource_providers/%s/inventories' % self.rp)
        self.assertEqual(409, status)
        self.assertEqual('placement.inventory.inuse',
                         body['errors'][0]['code'])
        self.assertIn("Inventory for 'VCPU, DISK_GB, CUSTOM_AAA' on resource "
                      "provider '%s' in use." % self.rp, self.detail(body))

    def test_put_inventories(self):
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % self.rp,
            {'resource_provider_generation': 2,
             'inventories': {'MEMORY_MB': {'total': 64}}})
        self.assertEqual(409, status)
        self.assertIn("update conflict: Inventory for 'VCPU, DISK_GB, "
                      "CUSTOM_AAA' on resource provider '%s' in use."
                      % self.rp, self.detail(body))

    def test_reshaper(self):
        status, body = self.call('POST', '/reshaper', {
            'inventories': {self.rp: {
                'resource_provider_generation': 2,
                'inventories': {'MEMORY_MB': {'total': 64}}}},
            'allocations': {}})
        self.assertEqual(409, status, body)
        self.assertEqual('placement.inventory.inuse',
                         body['errors'][0]['code'])
        self.assertIn("update conflict: Inventory for 'VCPU, DISK_GB, "
                      "CUSTOM_AAA' on resource provider '%s' in use."
                      % self.rp, self.detail(body))


class TestInventoryUpdateChecksCapacityFirst(ApiTestCase):
    """Upstream validates the record's capacity before it looks up the
    class or the provider's inventory of it."""

    bad = {'total': 2048, 'reserved': 4096}

    def setUp(self):
        super().setUp()
        self.rp = self.provider('rp', {'DISK_GB': {'total': 2048}})

    def _update_one(self, name):
        return self.call(
            'PUT', '/resource_providers/%s/inventories/%s' % (self.rp, name),
            dict(self.bad, resource_provider_generation=1))

    def test_class_without_inventory(self):
        status, body = self._update_one('MEMORY_MB')
        self.assertEqual(400, status)
        self.assertIn(
            "\n\n Unable to update inventory for resource provider %s: "
            "Invalid inventory for 'MEMORY_MB' on resource provider '%s'. "
            "The reserved value is greater than total." % (self.rp, self.rp),
            self.detail(body))

    def test_unknown_class(self):
        status, body = self._update_one('CUSTOM_NOPE')
        self.assertEqual(400, status)
        self.assertIn('Unable to update inventory for resource provider %s: '
                      "Invalid inventory for 'CUSTOM_NOPE'" % self.rp,
                      self.detail(body))

    def test_unknown_class_in_whole_inventory(self):
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % self.rp,
            {'resource_provider_generation': 1,
             'inventories': {'CUSTOM_NOPE': self.bad}})
        self.assertEqual(400, status)
        self.assertIn('Unable to update inventory for resource provider %s: '
                      "Invalid inventory for 'CUSTOM_NOPE'" % self.rp,
                      self.detail(body))

    def test_unknown_class_with_good_record_is_404(self):
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories/CUSTOM_NOPE' % self.rp,
            {'resource_provider_generation': 1, 'total': 1})
        self.assertEqual(404, status)
        self.assertIn('No such resource class CUSTOM_NOPE.',
                      self.detail(body))


class TestUnknownTraitNamed(ApiTestCase):
    """Upstream stops at the first trait its cache lacks and names it
    alone: required traits in request order, then forbidden ones."""

    def test_provider_list_names_the_first_required(self):
        status, body = self.call(
            'GET', '/resource_providers?required=CUSTOM_ZZZ,CUSTOM_NOPE,'
            '!CUSTOM_AAA')
        self.assertEqual(400, status)
        self.assertIn('Invalid trait(s) in "required" parameter: No such '
                      'trait(s): CUSTOM_ZZZ.  ', self.detail(body))

    def test_candidates_name_one_of_an_any_of_set(self):
        # Which one upstream names is undefined (a set); ours the smallest.
        status, body = self.call(
            'GET', '/allocation_candidates?resources=VCPU:1'
            '&required=in:CUSTOM_ZZZ,CUSTOM_AAA')
        self.assertEqual(400, status)
        self.assertIn(' No such trait(s): CUSTOM_AAA.  ', self.detail(body))


class TestTraitsInIdOrder(ApiTestCase):
    """Upstream lists traits in id order (standard traits, synced first,
    before custom ones; custom ones by creation), not by name."""

    def setUp(self):
        super().setUp()
        for name in ('CUSTOM_ZED', 'CUSTOM_ABC'):
            self.assertEqual(201, self.call('PUT', '/traits/' + name)[0])
        self.rp = self.provider('host', {'VCPU': {'total': 4}})
        status, body = self.call(
            'PUT', '/resource_providers/%s/traits' % self.rp,
            {'resource_provider_generation': 1,
             'traits': ['CUSTOM_ABC', 'HW_NUMA_ROOT', 'CUSTOM_ZED']})
        self.assertEqual(200, status, body)
        self.put_body = body
        self.expected = ['HW_NUMA_ROOT', 'CUSTOM_ZED', 'CUSTOM_ABC']

    def test_candidate_summaries(self):
        status, body = self.call(
            'GET', '/allocation_candidates?resources=VCPU:1')
        self.assertEqual(200, status, body)
        self.assertEqual(self.expected,
                         body['provider_summaries'][self.rp]['traits'])

    def test_candidate_summaries_of_hosts_alike(self):
        # Equal trait sets share one sorted list: still id order.
        other = self.provider('twin', {'VCPU': {'total': 4}})
        self.call('PUT', '/resource_providers/%s/traits' % other,
                  {'resource_provider_generation': 1,
                   'traits': ['CUSTOM_ZED', 'CUSTOM_ABC', 'HW_NUMA_ROOT']})
        _, body = self.call('GET', '/allocation_candidates?resources=VCPU:1')
        for uuid in (self.rp, other):
            self.assertEqual(self.expected,
                             body['provider_summaries'][uuid]['traits'])

    def test_provider_traits(self):
        _, body = self.call('GET', '/resource_providers/%s/traits' % self.rp)
        self.assertEqual(self.expected, body['traits'])
        self.assertEqual(self.expected, self.put_body['traits'])

    def test_trait_list(self):
        _, body = self.call('GET', '/traits?name=startswith:CUSTOM_')
        self.assertEqual(['CUSTOM_ZED', 'CUSTOM_ABC'], body['traits'])
        _, body = self.call('GET', '/traits')
        self.assertEqual(['CUSTOM_ZED', 'CUSTOM_ABC'], body['traits'][-2:])
        # Standard traits first: every custom one comes after them.
        standard = [n for n in body['traits'] if not n.startswith('CUSTOM_')]
        self.assertEqual(body['traits'][:len(standard)], standard)


def webob_rendering(exc, method='GET', headers=None):
    """(status, content type, body) of a WebOb exception as WebOb renders
    it for a request: the way upstream's errors reach the client."""
    req = webob.Request.blank('/', method=method, headers=headers or {})
    resp = req.get_response(exc)
    return resp.status, resp.headers['Content-Type'], resp.body


class TestErrorsHonourAccept(ApiTestCase):
    """Errors come as JSON only when the client accepts JSON; otherwise
    as WebOb's HTML page or plain text, as upstream's do."""

    def rendering(self, method, path, headers, body=None):
        resp = self.request(method, path, body, headers)
        return resp.status, resp.headers['Content-Type'], resp.body

    def test_unknown_path_as_html(self):
        headers = {'Accept': 'text/html'}
        got = self.rendering('GET', '/bc8d9d50', headers)
        self.assertEqual(
            webob_rendering(webob.exc.HTTPNotFound(), headers=headers), got)
        self.assertEqual('text/html; charset=UTF-8', got[1])
        self.assertIn(b'<h1>404 Not Found</h1>', got[2])

    def test_unknown_path_as_plain_text(self):
        for accept in ('text/plain', 'application/xml'):
            headers = {'Accept': accept}
            got = self.rendering('GET', '/bc8d9d50', headers)
            self.assertEqual(webob_rendering(webob.exc.HTTPNotFound(),
                                             headers=headers), got)
            self.assertEqual(b'404 Not Found\n\nThe resource could not be '
                             b'found.\n\n   ', got[2])

    def test_json_when_acceptable(self):
        for accept in ('application/json', 'text/html;q=0.5, '
                       'application/json', 'application/*', '*/*'):
            resp = self.request('GET', '/bc8d9d50',
                                headers={'Accept': accept})
            self.assertEqual('application/json', resp.content_type)
            self.assertEqual(404, resp.json['errors'][0]['status'])

    def test_bad_microversion_as_html(self):
        headers = {'Accept': 'text/html',
                   'OpenStack-API-Version': 'placement 0.5'}
        got = self.rendering('GET', '/', headers)
        self.assertEqual(webob_rendering(webob.exc.HTTPNotAcceptable(
            'Invalid microversion: Unacceptable version header: 0.5'),
            headers=headers), got)
        self.assertIn(b'(content of type text/html. <br /><br />\n'
                      b'Invalid microversion: Unacceptable version header: '
                      b'0.5', got[2])

    def test_bad_microversion_as_json_is_unchanged(self):
        status, body = self.call(
            'GET', '/', headers={'OpenStack-API-Version': 'placement 0.5'})
        self.assertEqual(406, status)
        error = body['errors'][0]
        self.assertEqual(
            'The resource could not be generated that was acceptable to your '
            'browser (content of type application/json. \n\n Invalid '
            'microversion: Unacceptable version header: 0.5', error['detail'])
        self.assertIn('max_version', error)

    def test_json_only_route_refuses_in_plain_text(self):
        headers = {'Accept': 'text/plain'}
        got = self.rendering('GET', '/resource_providers', headers)
        self.assertEqual(webob_rendering(webob.exc.HTTPNotAcceptable(
            'Only application/json is provided'), headers=headers), got)
        self.assertEqual('text/plain; charset=UTF-8', got[1])

    def test_method_not_allowed_names_the_method(self):
        headers = {'Accept': 'text/plain'}
        got = self.rendering('PATCH', '/resource_providers', headers)
        self.assertEqual(webob_rendering(webob.exc.HTTPMethodNotAllowed(
            'The method specified is not allowed for this resource.'),
            method='PATCH', headers=headers), got)

    def test_unsupported_media_type(self):
        resp = self.request('POST', '/resource_providers',
                            headers={'Accept': 'text/html',
                                     'Content-Type': 'text/plain'})
        self.assertEqual(415, resp.status_int)
        self.assertIn(b'The request media type text/plain is not supported '
                      b'by this server.\n<br /><br />\nThe media type '
                      b'text/plain is not supported, use application/json',
                      resp.body)

    def test_html_escapes_and_json_strips_tags(self):
        path = '/resource_classes/CUSTOM_%3Cb%3EX'
        resp = self.request('GET', path, headers={'Accept': 'text/html'})
        # Only application/json is provided: a 406 page.
        self.assertEqual(406, resp.status_int)
        resp = self.request('DELETE', path, headers={'Accept': 'text/html'})
        self.assertEqual(404, resp.status_int)
        self.assertIn(b'No such resource class CUSTOM_&lt;b&gt;X.', resp.body)
        status, body = self.call('DELETE', path)
        self.assertEqual(404, status)
        # Upstream's formatter strips tags from WebOb's text.
        self.assertIn(' No such resource class CUSTOM_X.',
                      self.detail(body))

    def test_unauthorized(self):
        for accept, kind in (('text/html', 'text/html; charset=UTF-8'),
                             ('text/plain', 'text/plain; charset=UTF-8')):
            headers = {'Accept': accept}
            req = webob.Request.blank('/resource_providers', headers=headers)
            resp = req.get_response(self.app)
            self.assertEqual(401, resp.status_int)
            self.assertEqual(kind, resp.headers['Content-Type'])
            self.assertEqual(webob_rendering(webob.exc.HTTPUnauthorized(),
                                             headers=headers)[2], resp.body)

    def test_unexpected_error_as_upstreams_fault_wrapper(self):
        def broken(*args, **kwargs):
            raise RuntimeError('boom\nagain')
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.objects.trait.list_names', broken))
        self.useFixture(fixtures.FakeLogger())
        resp = self.request('GET', '/traits')
        self.assertEqual(500, resp.status_int)
        self.assertEqual(
            'The server has either erred or is incapable of performing the '
            'requested operation.\n\n boom again  ',
            resp.json['errors'][0]['detail'])
        self.assertNotIn('openstack-api-version', resp.headers)

    def test_head_gets_the_bare_error(self):
        for path in ('/resource_providers', '/bc8d9d50'):
            resp = self.request('HEAD', path)
            expected = webob_rendering(
                webob.exc.HTTPMethodNotAllowed() if path[1] == 'r'
                else webob.exc.HTTPNotFound(), method='HEAD')
            self.assertEqual(expected, (resp.status,
                                        resp.headers['Content-Type'],
                                        resp.body))


class TestAggregatesInIdOrder(ApiTestCase):

    def test_provider_aggregates_by_first_use(self):
        rp = self.provider('rp')
        later, first = ('ffffffff-0000-4000-8000-000000000000',
                        '00000000-0000-4000-8000-000000000000')
        path = '/resource_providers/%s/aggregates' % rp
        status, body = self.call('PUT', path, {
            'aggregates': [later], 'resource_provider_generation': 0})
        self.assertEqual(200, status, body)
        status, body = self.call('PUT', path, {
            'aggregates': [first, later], 'resource_provider_generation': 1})
        # The PUT echoes the request; GET lists by aggregate id.
        self.assertEqual([first, later], body['aggregates'])
        _, body = self.call('GET', path)
        self.assertEqual([later, first], body['aggregates'])


class TestConsumerWrittenEmpty(ApiTestCase):
    """Upstream creates the consumer before it writes and then touches
    only the consumers its allocation records name: a new consumer
    written with no allocations stays, at generation 0."""

    def setUp(self):
        super().setUp()
        self.rp = self.provider('rp', {'VCPU': {'total': 4}})
        self.consumer = str(uuidlib.uuid4())
        status, body = self.claim({}, self.consumer)
        self.assertEqual(204, status, body)

    def test_kept_at_generation_zero(self):
        _, body = self.call('GET', '/allocations/' + self.consumer)
        self.assertEqual({'allocations': {}}, body)
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer)
        self.assertEqual(409, status)
        self.assertIn('consumer generation conflict - expected 0 but got '
                      'None', self.detail(body))
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer, 0)
        self.assertEqual(204, status, body)
        _, body = self.call('GET', '/allocations/' + self.consumer)
        self.assertEqual(1, body['consumer_generation'])

    def test_written_empty_again_is_left_alone(self):
        status, body = self.claim({}, self.consumer, 0)
        self.assertEqual(204, status, body)
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer, 0)
        self.assertEqual(204, status, body)

    def test_unsafe_delete_finds_nothing_and_keeps_it(self):
        status, _ = self.call('DELETE', '/allocations/' + self.consumer)
        self.assertEqual(404, status)
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer, 0)
        self.assertEqual(204, status, body)

    def test_post_of_a_new_consumer_without_allocations(self):
        other = str(uuidlib.uuid4())
        status, body = self.call('POST', '/allocations', {other: {
            'allocations': {}, 'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}})
        self.assertEqual(204, status, body)
        status, body = self.claim({self.rp: {'VCPU': 1}}, other, 0)
        self.assertEqual(204, status, body)

    def test_emptied_consumer_is_still_deleted(self):
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer, 0)
        self.assertEqual(204, status, body)
        status, body = self.claim({}, self.consumer, 1)
        self.assertEqual(204, status, body)
        status, body = self.claim({self.rp: {'VCPU': 1}}, self.consumer)
        self.assertEqual(204, status, body)
