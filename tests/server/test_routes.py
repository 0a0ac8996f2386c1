# SPDX-License-Identifier: Apache-2.0
"""The route table's version gates: each gated method is hidden below the
version of its rule, and its checks run in upstream's order."""

import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server import microversion
from osc_placement.server import routes
from tests.server import fixtures as api_fixtures

FAKE = {'uuid': '7d3e3f8a-1d2c-4a6b-9f00-000000000001', 'name': 'CUSTOM_X',
        'resource_class': 'VCPU',
        'consumer_uuid': '7d3e3f8a-1d2c-4a6b-9f00-000000000002'}


def _gated_methods():
    """(path, method, gate) of every method with a version gate."""
    for template, methods in routes.ROUTES:
        for method, steps in methods.items():
            for step in steps:
                if isinstance(step, routes.Since):
                    yield template.format(**FAKE), method, step


class TestRouteGates(testtools.TestCase):

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        self.app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=db)

    def request(self, method, path, version, accept=None, body=None):
        headers = {'X-Auth-Token': 'admin',
                   'OpenStack-API-Version': 'placement ' + str(version)}
        if accept:
            headers['Accept'] = accept
        req = webob.Request.blank(path, method=method, headers=headers)
        if body is not None:
            req.body, req.content_type = body
        return req.get_response(self.app)

    def test_a_gated_method_is_hidden_below_its_rule(self):
        gated = list(_gated_methods())
        self.assertEqual(19, len(gated))  # the @since decorators it replaced
        json = (b'{}', 'application/json')
        for path, method, gate in gated:
            since = microversion.SINCE[gate.rule]
            older = microversion.Version(since.major, since.minor - 1)
            body = json if method in ('PUT', 'POST') else None
            resp = self.request(method, path, older, body=body)
            self.assertEqual(gate.status, resp.status_int,
                             (method, path, str(older)))
            if gate.status == 404:
                self.assertNotIn('vary', resp.headers)
            if gate.status == 405:
                self.assertIn(method, resp.headers['Allow'])
            # Past the gate even a handler's 404 (no such provider) varies
            # by version; the gate's does not, as upstream's.
            resp = self.request(method, path, since, body=body)
            self.assertNotEqual(405, resp.status_int)
            self.assertIn('vary', resp.headers, (method, path, str(since)))

    def test_where_upstream_checks_accept_first_a_406_wins(self):
        resp = self.request('GET', '/resource_classes', '1.1',
                            accept='text/plain')
        self.assertEqual(406, resp.status_int)

    def test_where_upstream_checks_the_version_first_a_404_wins(self):
        resp = self.request('GET', '/usages?project_id=p', '1.8',
                            accept='text/plain')
        self.assertEqual(404, resp.status_int)
        resp = self.request('POST', '/resource_classes', '1.1',
                            body=(b'x', 'text/plain'))
        self.assertEqual(404, resp.status_int)

    def test_where_upstream_checks_the_body_first_a_415_wins(self):
        resp = self.request('PUT', '/resource_providers/%s/aggregates'
                            % FAKE['uuid'], '1.0', body=(b'x', 'text/plain'))
        self.assertEqual(415, resp.status_int)

    def test_a_gate_names_a_row_of_the_table(self):
        self.assertRaises(ValueError, routes.Since, 'no_such_rule')
