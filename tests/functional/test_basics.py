# SPDX-License-Identifier: Apache-2.0
"""The plugin's wiring against the real server: negotiation, errors."""

from tests.functional import base


class TestNegotiation(base.FunctionalTestCase):

    def test_default_version_negotiates_1_39(self):
        result = self.openstack('--debug resource class list', may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('OpenStack-API-Version: placement 1.39', result.stderr)
        self.assertNotIn('placement 1.29', result.stderr)

    def test_standard_classes_are_listed(self):
        names = {rc['name'] for rc in
                 self.openstack('resource class list', use_json=True)}
        self.assertTrue({'VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU',
                         'PCI_DEVICE'} <= names)

    def test_unsupported_version_is_one_line(self):
        result = self.assertCommandFails(
            'resource class list', "Unsupported placement API version "
            "'1.40'", version='1.40')
        self.assertEqual(1, len(result.stderr.strip().splitlines()))

    def test_gate_below_minimum(self):
        self.assertCommandFails(
            'resource class list', 'Operation or argument is not supported '
            'with version 1.1; requires at least version 1.2',
            version='1.1')
