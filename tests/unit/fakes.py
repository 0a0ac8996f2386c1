# SPDX-License-Identifier: Apache-2.0
"""A real keystoneauth1 session over a fake transport (requests-mock)."""

from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
import requests_mock
import testtools

ENDPOINT = 'http://placement.example.test'
ROOT = ENDPOINT + '/'


def root_document(max_version='1.39'):
    return {'versions': [{'id': 'v1.0', 'max_version': max_version,
                          'min_version': '1.0', 'status': 'CURRENT',
                          'links': [{'rel': 'self', 'href': ''}]}]}


def not_acceptable(max_version):
    return {'errors': [{
        'status': 406, 'title': 'Not Acceptable',
        'detail': 'The requested version is not supported.\n\n'
                  'Invalid microversion: Unacceptable version header: 1.39',
        'max_version': max_version, 'min_version': '1.0',
        'request_id': 'req-00000000-0000-0000-0000-000000000000'}]}


def placement_error(status, title, detail, code='placement.undefined_code'):
    return {'errors': [{'status': status, 'title': title, 'detail': detail,
                        'code': code,
                        'request_id': 'req-11111111-1111-1111-1111-1111'}]}


def session():
    """A keystoneauth1 session whose every request goes to ENDPOINT."""
    return ks_session.Session(auth=noauth.NoAuth(endpoint=ENDPOINT))


class TransportTestCase(testtools.TestCase):
    """Tests with ``self.transport``, a requests-mock Mocker."""

    def setUp(self):
        super().setUp()
        self.transport = requests_mock.Mocker()
        self.transport.start()
        self.addCleanup(self.transport.stop)

    def versions_sent(self):
        return [r.headers.get('OpenStack-API-Version')
                for r in self.transport.request_history]

    def paths_sent(self):
        return [(r.method, r.path) for r in self.transport.request_history]
