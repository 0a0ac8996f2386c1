# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for tests of placement commands run through the shell."""

import json
from urllib import parse

from tests.unit import fakes
from tests.unit import shell

UUID1 = '11111111-1111-1111-1111-111111111111'
UUID2 = '22222222-2222-2222-2222-222222222222'
UUID3 = '33333333-3333-3333-3333-333333333333'
AGG = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa'


def url(path):
    return fakes.ENDPOINT + path


def provider(uuid, name='rp', generation=0, parent=None):
    return {'uuid': uuid, 'name': name, 'generation': generation,
            'root_provider_uuid': uuid, 'parent_provider_uuid': parent,
            'links': []}


def error(status, detail, code='placement.undefined_code'):
    return {'status_code': status,
            'json': fakes.placement_error(status, 'Error', detail, code)}


class CommandTestCase(fakes.TransportTestCase):
    """Run ``openstack`` commands at a given microversion."""

    def run_cmd(self, *argv, version='1.39'):
        """Run at ``version``; ``version=None`` negotiates."""
        prefix = ('--os-placement-api-version', version) if version else ()
        return shell.run_openstack(self, *(prefix + argv))

    def assert_ok(self, result):
        self.assertEqual(0, result.code, result.stderr)

    def assert_fails(self, result, message, code=1):
        self.assertEqual(code, result.code, result.stdout)
        self.assertIn(message, result.stderr)

    def sent(self):
        """(method, path, query dict of lists, json body) per request."""
        return [(r.method, parse.urlsplit(r.url).path, self.query(r),
                 self.body(r))
                for r in self.transport.request_history]

    def versions(self):
        return [r.headers.get('OpenStack-API-Version')
                for r in self.transport.request_history]

    @staticmethod
    def query(request):
        return parse.parse_qs(parse.urlsplit(request.url).query,
                              keep_blank_values=True)

    @staticmethod
    def body(request):
        return json.loads(request.text) if request.text else None

    def bodies(self, method):
        return [self.body(r) for r in self.transport.request_history
                if r.method == method]

    @staticmethod
    def json_out(result):
        return json.loads(result.stdout)
