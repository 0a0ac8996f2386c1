# SPDX-License-Identifier: Apache-2.0
import argparse
import json

import fixtures
from osc_lib import exceptions as osc_exc
import testtools

from osc_placement import http
from osc_placement import plugin
from tests.unit import fakes
from tests.unit import shell


class TestOptions(testtools.TestCase):

    def parse(self, *argv):
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        return parser.parse_args(list(argv))

    def test_default_is_negotiate(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_API_VERSION'))
        self.assertEqual('1', self.parse().os_placement_api_version)

    def test_environment_sets_the_default(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_API_VERSION', '1.28'))
        self.assertEqual('1.28', self.parse().os_placement_api_version)

    def test_option_wins_over_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_API_VERSION', '1.28'))
        self.assertEqual('1.39', self.parse(
            '--os-placement-api-version', '1.39').os_placement_api_version)

    def test_every_version_maps_to_the_session_client(self):
        self.assertEqual(41, len(plugin.API_VERSIONS))
        self.assertEqual({'osc_placement.http.SessionClient'},
                         set(plugin.API_VERSIONS.values()))

    def test_check_api_version(self):
        self.assertTrue(plugin.check_api_version('1.36'))
        self.assertTrue(plugin.check_api_version('1'))
        self.assertRaisesRegex(osc_exc.CommandError,
                               "Unsupported placement API version '1.40'",
                               plugin.check_api_version, '1.40')


class _Instance:
    region_name = 'RegionTwo'
    interface = 'internal'

    def __init__(self, requested):
        self.session = fakes.session()
        self._api_version = {'placement': requested}


class TestMakeClient(testtools.TestCase):

    def test_builds_session_client_with_filter(self):
        client = plugin.make_client(_Instance('1.05'))
        self.assertIsInstance(client, http.SessionClient)
        self.assertEqual({'service_type': 'placement',
                          'region_name': 'RegionTwo',
                          'interface': 'internal'}, client.ks_filter)
        self.assertEqual('1.5', client.api_version)

    def test_rejects_unknown_versions(self):
        self.assertRaises(osc_exc.UnsupportedVersion, plugin.make_client,
                          _Instance('1.40'))


class TestShell(fakes.TransportTestCase):
    """The real openstack shell, with our plugin, over a fake transport."""

    def classes_url(self):
        return fakes.ENDPOINT + '/resource_classes'

    def test_resource_class_list_negotiates_and_lists(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        self.transport.get(self.classes_url(), json={'resource_classes': [
            {'name': 'VCPU', 'links': []}, {'name': 'CUSTOM_X', 'links': []}]})
        result = shell.run_openstack(self, 'resource', 'class', 'list',
                                     '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'VCPU'}, {'name': 'CUSTOM_X'}],
                         json.loads(result.stdout))
        self.assertEqual(['placement 1.39', 'placement 1.39'],
                         self.versions_sent())

    def test_server_speaking_up_to_1_20_settles_on_1_20(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.20'))
        self.transport.get(self.classes_url(), json={'resource_classes': []})
        result = shell.run_openstack(self, 'resource', 'class', 'list')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['placement 1.39', 'placement 1.20'],
                         self.versions_sent())

    def test_unsupported_version_is_one_line_and_exit_1(self):
        result = shell.run_openstack(self, '--os-placement-api-version',
                                     '1.40', 'resource', 'class', 'list')
        self.assertEqual(1, result.code)
        self.assertEqual(
            ["Unsupported placement API version '1.40': use 1 to negotiate, "
             "or a microversion from 1.0 to 1.39"],
            result.stderr.strip().splitlines())
        self.assertEqual([], self.transport.request_history)

    def test_environment_version_is_validated_too(self):
        result = shell.run_openstack(
            self, 'resource', 'class', 'list',
            env={'OS_PLACEMENT_API_VERSION': 'pony'})
        self.assertEqual(1, result.code)
        self.assertIn("Unsupported placement API version 'pony'",
                      result.stderr)

    def test_gate_failure_is_upstream_text_and_exit_1(self):
        result = shell.run_openstack(self, '--os-placement-api-version',
                                     '1.1', 'resource', 'class', 'list')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.1; requires at least version 1.2',
                         result.stderr.strip())
        self.assertEqual([], self.transport.request_history)

    def test_server_error_is_one_line_and_exit_1(self):
        self.transport.get(self.classes_url(), status_code=403,
                           json=fakes.placement_error(
                               403, 'Forbidden', 'Access was denied to this '
                               'resource.\n\n Policy does not allow '
                               'placement:resource_classes:list to be '
                               'performed.  '))
        result = shell.run_openstack(self, '--os-placement-api-version',
                                     '1.2', 'resource', 'class', 'list')
        self.assertEqual(1, result.code)
        self.assertEqual('Policy does not allow placement:resource_classes:'
                         'list to be performed. (HTTP 403)',
                         result.stderr.strip())

    def test_help_sends_nothing(self):
        result = shell.run_openstack(self, 'resource', 'class', 'list',
                                     '--help')
        self.assertEqual(0, result.code)
        self.assertIn('Return a list of all resource classes', result.stdout)
        self.assertEqual([], self.transport.request_history)

    def test_debug_shows_request_ids(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document(),
                           headers={'x-openstack-request-id': 'req-root'})
        self.transport.get(self.classes_url(), json={'resource_classes': []},
                           headers={'x-openstack-request-id': 'req-list'})
        result = shell.run_openstack(self, '--debug', 'resource', 'class',
                                     'list')
        self.assertEqual(0, result.code)
        self.assertIn('used request id req-list', result.stderr)
