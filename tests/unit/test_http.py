# SPDX-License-Identifier: Apache-2.0
import io
import logging

import fixtures

from osc_lib import exceptions as osc_exc
import requests
import testtools

from osc_placement import http
from tests.unit import fakes


def client(api_version='1'):
    return http.SessionClient(session=fakes.session(),
                              ks_filter={'service_type': 'placement'},
                              api_version=api_version)


class TestHeaders(fakes.TransportTestCase):

    def test_every_request_carries_version_and_accept(self):
        self.transport.get(fakes.ENDPOINT + '/traits', json={'traits': []})
        client('1.6').request('GET', '/traits')
        sent = self.transport.last_request
        self.assertEqual('placement 1.6',
                         sent.headers['OpenStack-API-Version'])
        self.assertEqual('application/json', sent.headers['Accept'])

    def test_per_call_version_overrides(self):
        self.transport.get(fakes.ENDPOINT + '/traits', json={'traits': []})
        client('1.6').request('GET', '/traits', version='1.39')
        self.assertEqual(['placement 1.39'], self.versions_sent())

    def test_explicit_version_never_negotiates(self):
        self.transport.get(fakes.ENDPOINT + '/traits', json={'traits': []})
        c = client('1.20')
        self.assertEqual('1.20', c.api_version)
        c.request('GET', '/traits')
        self.assertEqual([('GET', '/traits')], self.paths_sent())


class TestNegotiation(fakes.TransportTestCase):

    def test_building_the_client_sends_nothing(self):
        client()
        self.assertEqual([], self.transport.request_history)

    def test_modern_server_settles_on_1_39(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document('1.39'))
        self.assertEqual('1.39', client().api_version)
        self.assertEqual(['placement 1.39'], self.versions_sent())

    def test_older_server_406_settles_on_its_maximum(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.20'))
        self.assertEqual('1.20', client().api_version)

    def test_negotiated_version_is_used_for_requests(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.20'))
        self.transport.get(fakes.ENDPOINT + '/traits', json={'traits': []})
        client().request('GET', '/traits')
        self.assertEqual(['placement 1.39', 'placement 1.20'],
                         self.versions_sent())

    def test_negotiates_once(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        self.transport.get(fakes.ENDPOINT + '/traits', json={'traits': []})
        c = client()
        for _ in range(3):
            c.request('GET', '/traits')
        self.assertEqual(1, self.paths_sent().count(('GET', '/')))

    def test_server_maximum_above_ours_is_capped(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.45'))
        self.assertEqual('1.39', client().api_version)

    def test_406_without_max_version_falls_back_to_1_0(self):
        self.transport.get(fakes.ROOT, status_code=406, text='nope')
        self.assertEqual('1.0', client().api_version)

    def test_uninformative_root_keeps_our_maximum(self):
        self.transport.get(fakes.ROOT, status_code=404, text='not here')
        self.assertEqual('1.39', client().api_version)

    def test_unreachable_server_is_one_readable_line(self):
        self.transport.get(fakes.ROOT,
                           exc=requests.exceptions.ConnectionError(
                               '[Errno 111] Connection refused'))
        error = self.assertRaises(osc_exc.CommandError,
                                  lambda: client().api_version)
        self.assertEqual('The Placement service at %s could not be reached: '
                         'Connection refused' % fakes.ENDPOINT, str(error))

    def test_timeout_is_one_readable_line(self):
        self.transport.get(fakes.ROOT,
                           exc=requests.exceptions.ConnectTimeout('slow'))
        error = self.assertRaises(osc_exc.CommandError,
                                  lambda: client().api_version)
        self.assertEqual('The Placement service at %s timed out'
                         % fakes.ENDPOINT, str(error))


class TestErrorTranslation(fakes.TransportTestCase):

    def fail_with(self, status, **response):
        self.transport.get(fakes.ENDPOINT + '/thing', status_code=status,
                           **response)
        # osc-lib's HTTP errors and its CommandError share no base class
        # of their own: each test says which one it expects.
        return self.assertRaises(
            (osc_exc.ClientException, osc_exc.CommandError),
            client('1.39').request, 'GET', '/thing')

    def test_mapped_4xx_use_last_line_of_detail(self):
        detail = ('The resource could not be found.\n\n No resource '
                  'provider with uuid 1234 found  ')
        cases = {400: osc_exc.BadRequest, 401: osc_exc.Unauthorized,
                 403: osc_exc.Forbidden, 404: osc_exc.NotFound,
                 409: osc_exc.Conflict, 413: osc_exc.OverLimit}
        for status, cls in cases.items():
            error = self.fail_with(
                status, json=fakes.placement_error(status, 'x', detail))
            self.assertIsInstance(error, cls)
            self.assertEqual('No resource provider with uuid 1234 found '
                             '(HTTP %d)' % status, str(error))

    def test_unmapped_4xx_is_a_line_not_a_tuple(self):
        error = self.fail_with(405, json=fakes.placement_error(
            405, 'Method Not Allowed', 'The method PATCH is not allowed.'))
        self.assertIsInstance(error, osc_exc.CommandError)
        self.assertEqual('The method PATCH is not allowed. (HTTP 405)',
                         str(error))

    def test_non_json_4xx_body(self):
        error = self.fail_with(400, text='<html><body>\nBad gateway thing\n')
        self.assertIsInstance(error, osc_exc.BadRequest)
        self.assertEqual('<html><body> (HTTP 400)', str(error))

    def test_empty_4xx_body_uses_reason(self):
        error = self.fail_with(409, text='', reason='Conflict')
        self.assertEqual('Conflict (HTTP 409)', str(error))

    def test_5xx_is_readable_with_request_id(self):
        error = self.fail_with(
            500, json=fakes.placement_error(500, 'Internal Server Error',
                                            'boom'),
            headers={'x-openstack-request-id': 'req-abc'})
        self.assertIsInstance(error, osc_exc.CommandError)
        self.assertEqual('Placement server error: boom (HTTP 500) '
                         '(Request-ID: req-abc)', str(error))

    def test_5xx_without_body(self):
        error = self.fail_with(503, text='', reason='Service Unavailable')
        self.assertEqual('Placement server error: Service Unavailable '
                         '(HTTP 503)', str(error))

    def test_4xx_ends_with_the_request_id_after_upstreams_text(self):
        cases = {400: osc_exc.BadRequest, 404: osc_exc.NotFound,
                 409: osc_exc.Conflict}
        for status, cls in cases.items():
            error = self.fail_with(
                status, json=fakes.placement_error(status, 'x', 'gone'),
                headers={'x-openstack-request-id': 'req-%d' % status})
            # Still the osc-lib class upstream raises and commands catch.
            self.assertIsInstance(error, cls)
            self.assertEqual(status, error.http_status)
            self.assertEqual('gone (HTTP %d) (Request-ID: req-%d)'
                             % (status, status), str(error))

    def test_unmapped_4xx_ends_with_the_request_id(self):
        error = self.fail_with(
            405, json=fakes.placement_error(405, 'x', 'No PATCH.'),
            headers={'x-openstack-request-id': 'req-405'})
        self.assertEqual('No PATCH. (HTTP 405) (Request-ID: req-405)',
                         str(error))

    def test_a_hint_follows_the_request_id(self):
        error = self.fail_with(
            409, json=fakes.placement_error(409, 'x', 'in use'),
            headers={'x-openstack-request-id': 'req-1'})
        error.hint = '. See: something'
        self.assertEqual('in use (HTTP 409) (Request-ID: req-1). See: '
                         'something', str(error))

    def test_raise_exc_false_returns_the_response(self):
        self.transport.get(fakes.ENDPOINT + '/thing', status_code=404,
                           json={})
        response = client('1.0').request('GET', '/thing', raise_exc=False)
        self.assertEqual(404, response.status_code)


class RecordsSeen(logging.Filter):
    """Notes every record a logger is asked to log, and drops it."""

    def __init__(self):
        super().__init__()
        self.records = []

    def filter(self, record):
        self.records.append(record.getMessage())
        return False


class TestWireLog(fakes.TransportTestCase):
    """keystoneauth1's request/response log is built only when shown."""

    def setUp(self):
        super().setUp()
        # As the shells set logging up: every logger enabled at DEBUG, the
        # console handler deciding what is printed.
        root = logging.getLogger()
        self.addCleanup(setattr, root, 'handlers', list(root.handlers))
        self.addCleanup(root.setLevel, root.level)
        root.handlers = []
        root.setLevel(logging.DEBUG)
        self.console = logging.StreamHandler(io.StringIO())
        self.console.setLevel(logging.WARNING)
        root.addHandler(self.console)
        self.seen = RecordsSeen()
        ks_logger = logging.getLogger('keystoneauth.session')
        ks_logger.addFilter(self.seen)
        self.addCleanup(ks_logger.removeFilter, self.seen)
        self.transport.get(fakes.ENDPOINT + '/traits',
                           json={'traits': ['CUSTOM_A']},
                           headers={'Content-Type': 'application/json'})

    def test_nothing_is_built_for_a_warning_console(self):
        self.assertFalse(http.wire_log_shown())
        client('1.6').request('GET', '/traits')
        self.assertEqual([], self.seen.records)

    def test_a_debug_console_gets_the_body(self):
        self.console.setLevel(logging.DEBUG)
        self.assertTrue(http.wire_log_shown())
        client('1.6').request('GET', '/traits')
        self.assertIn('RESP BODY: {"traits": ["CUSTOM_A"]}',
                      self.seen.records)

    def test_a_handler_on_a_split_logger_counts(self):
        body = logging.getLogger('keystoneauth.session.body')
        handler = logging.StreamHandler(io.StringIO())
        body.addHandler(handler)
        self.addCleanup(body.removeHandler, handler)
        self.assertTrue(http.wire_log_shown())

    def test_a_logger_that_stops_propagating_hides_the_console(self):
        self.console.setLevel(logging.DEBUG)
        ks_logger = logging.getLogger('keystoneauth')
        self.addCleanup(setattr, ks_logger, 'propagate', ks_logger.propagate)
        ks_logger.propagate = False
        self.assertFalse(http.wire_log_shown())


class TestLeanQuery(testtools.TestCase):
    """A lean GET's query string is the one requests would send."""

    def test_same_query_as_requests(self):
        for params in ({'member_of': ['in:a,b', '!c'], 'required': 'X,!Y'},
                       {'name': 'host 1/ü', 'in_tree': None},
                       {'resources': 'VCPU:1,MEMORY_MB:512', 'limit': 5},
                       {}, None):
            expected = requests.Request(
                'GET', 'http://h/p', params=params).prepare().url
            self.assertEqual(expected, 'http://h/p' + http._query(params))


class TestLeanTransportChoices(testtools.TestCase):
    """The lean GETs reach the server as requests would, or not at all."""

    def setUp(self):
        super().setUp()
        for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY',
                     'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy',
                     'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'):
            self.useFixture(fixtures.EnvironmentVariable(name))

    def test_all_proxy_sends_requests_through_the_session(self):
        endpoint = 'http://placement.example:8778'
        self.assertFalse(http._environment_proxy(requests.Session(),
                                                 endpoint))
        self.useFixture(fixtures.EnvironmentVariable(
            'ALL_PROXY', 'http://proxy.example:3128'))
        self.assertTrue(http._environment_proxy(requests.Session(),
                                                endpoint))
        self.useFixture(fixtures.EnvironmentVariable(
            'NO_PROXY', 'placement.example'))
        self.assertFalse(http._environment_proxy(requests.Session(),
                                                 endpoint))

    def test_the_environment_ca_bundle_as_requests_reads_it(self):
        import requests.certs
        ks_session = session_verifying(verify=True)
        endpoint = 'https://placement.example'
        self.assertEqual(requests.certs.where(), http._verify_as_requests(
            ks_session, requests.Session(), endpoint))
        self.useFixture(fixtures.EnvironmentVariable(
            'REQUESTS_CA_BUNDLE', '/etc/site-ca.pem'))
        self.assertEqual('/etc/site-ca.pem', http._verify_as_requests(
            ks_session, requests.Session(), endpoint))
        self.assertFalse(http._verify_as_requests(
            session_verifying(verify=False), requests.Session(), endpoint))

    def test_paths_quoted_as_requests_quotes_them(self):
        self.assertEqual('/traits/CUSTOM_%C3%89',
                         http._quoted('/traits/CUSTOM_\u00c9'))
        self.assertEqual('/resource_classes/A%20B',
                         http._quoted('/resource_classes/A B'))


def session_verifying(verify):
    """The one attribute _verify_as_requests reads of a keystoneauth1
    session."""
    import types
    return types.SimpleNamespace(verify=verify)
