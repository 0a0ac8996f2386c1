# SPDX-License-Identifier: Apache-2.0
"""Where the audits find Nova: the catalogue, or the override.

The requests themselves are tested against a real Nova (tests/nova).
"""

import fixtures
from keystoneauth1 import noauth
from keystoneauth1 import plugin
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from osc_lib import exceptions
import testtools

from osc_placement import compute


class CatalogAuth(plugin.BaseAuthPlugin):
    """An auth plugin with a service catalogue of ``endpoints``."""

    def __init__(self, endpoints):
        super().__init__()
        self.endpoints = endpoints

    def get_endpoint(self, session, service_type=None, **kwargs):
        return self.endpoints.get(service_type)


class Manager:
    """What the commands use of the shell's client manager."""

    def __init__(self, auth, configuration=None, interface='public',
                 region_name=None):
        self.session = ks_session.Session(auth=auth)
        self.interface = interface
        self.region_name = region_name
        self._configuration = configuration or {}

    def get_configuration(self):
        return dict(self._configuration)


class TestComputeEndpoint(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable(
            compute.ENDPOINT_OVERRIDE_ENV))

    def test_the_catalogs_compute_endpoint(self):
        manager = Manager(CatalogAuth({'compute': 'http://nova/v2.1',
                                       'placement': 'http://placement'}))
        self.assertEqual('http://nova/v2.1',
                         compute.compute_endpoint(manager))

    def test_a_catalog_without_compute_is_an_error(self):
        manager = Manager(CatalogAuth({'placement': 'http://placement'}),
                          region_name='RegionTwo')
        error = self.assertRaises(exceptions.CommandError,
                                  compute.compute_endpoint, manager)
        self.assertIn('No compute endpoint in the service catalog '
                      '(interface public, region RegionTwo)', str(error))
        self.assertIn(compute.ENDPOINT_OVERRIDE_ENV, str(error))

    def test_one_endpoint_auth_is_never_taken_for_nova(self):
        for auth in (token_endpoint.Token('http://placement', 'admin'),
                     noauth.NoAuth(endpoint='http://placement')):
            self.assertRaises(exceptions.CommandError,
                              compute.compute_endpoint, Manager(auth))

    def test_the_override_wins_from_config_or_environment(self):
        auth = CatalogAuth({'compute': 'http://nova/v2.1'})
        manager = Manager(auth, {compute.ENDPOINT_OVERRIDE_KEY:
                                 'http://other/v2.1'})
        self.assertEqual('http://other/v2.1',
                         compute.compute_endpoint(manager))
        self.useFixture(fixtures.EnvironmentVariable(
            compute.ENDPOINT_OVERRIDE_ENV, 'http://env/v2.1'))
        self.assertEqual('http://env/v2.1', compute.compute_endpoint(
            Manager(token_endpoint.Token('http://placement', 'admin'))))
