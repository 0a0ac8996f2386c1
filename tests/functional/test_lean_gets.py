# SPDX-License-Identifier: Apache-2.0
"""Plain GETs skip the keystoneauth1 session (osc_placement.http.LeanGets)
and still show what the session would: the same answers, the wire log
under --debug, the same error texts."""

import json
import uuid

import fixtures

from tests.functional import base


class LeanGetsTests(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.aggregate = str(uuid.uuid4())
        for index in range(3):
            rp = self.create_provider(self.unique('lean%d' % index))
            self.set_inventory(rp['uuid'], {'VCPU': {'total': 8}})
            self.set_provider_aggregates(rp['uuid'], [self.aggregate])
        self.received = []
        self.hook_server(self.count_request)

    def count_request(self, environ):
        self.received.append((environ['REQUEST_METHOD'],
                              environ['PATH_INFO']))

    def session_calls(self):
        calls = []
        from keystoneauth1 import session as ks_session
        original = ks_session.Session.request

        def request(session, url, method, *args, **kwargs):
            calls.append((method, url))
            return original(session, url, method, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'keystoneauth1.session.Session.request', request))
        return calls

    def capacity(self, *extra):
        result = self.run_openstack(
            list(extra) + ['resource', 'provider', 'capacity', 'list',
                           '--aggregate', self.aggregate, '-f', 'json'])
        self.assertEqual(0, result.code, result.stderr)
        return result

    def test_gets_bypass_the_session_with_the_same_rows(self):
        calls = self.session_calls()
        lean = self.capacity()
        gets = [r for r in self.received if r[0] == 'GET' and r[1] != '/']
        # A list, then inventories and usages of three providers.
        self.assertEqual(7, len(gets))
        self.assertEqual([], [c for c in calls if c[1] != '/'])
        del self.received[:]
        debug = self.capacity('--debug')
        self.assertEqual(json.loads(lean.stdout), json.loads(debug.stdout))

    def test_debug_logs_every_request_on_the_wire(self):
        result = self.capacity('--debug')
        sent = result.stderr.count('REQ: curl')
        self.assertEqual(len(self.received), sent)
        self.assertEqual(7, len([r for r in self.received
                                 if r[0] == 'GET' and r[1] != '/']))

    def test_an_error_keeps_the_session_text(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'list', missing],
            'No resource provider with uuid %s found' % missing)

    def test_a_name_beyond_ascii_gets_the_server_answer(self):
        """requests quotes such a path; so must the lean way."""
        self.assertCommandFails(['trait', 'show', 'CUSTOM_\u00c9'],
                                'No such trait')
        # PATH_INFO holds the bytes sent, as WSGI says: latin-1 text.
        sent = '/traits/CUSTOM_\u00c9'.encode('utf-8').decode('latin-1')
        self.assertIn(('GET', sent), self.received)
