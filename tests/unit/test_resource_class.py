# SPDX-License-Identifier: Apache-2.0
import json

from tests.unit import fakes
from tests.unit import shell


class ResourceClassTestCase(fakes.TransportTestCase):

    def run_cmd(self, version, *argv):
        return shell.run_openstack(self, '--os-placement-api-version',
                                   version, 'resource', 'class', *argv)

    def url(self, path=''):
        return fakes.ENDPOINT + '/resource_classes' + path

    def assert_gate(self, result, used, needed):
        self.assertEqual(1, result.code)
        self.assertEqual(
            'Operation or argument is not supported with version %s; '
            'requires at least version %s' % (used, needed),
            result.stderr.strip())
        self.assertEqual([], self.transport.request_history)


class TestListResourceClass(ResourceClassTestCase):

    def test_lists_names_at_1_2(self):
        self.transport.get(self.url(), json={'resource_classes': [
            {'name': 'VCPU', 'links': []}]})
        result = self.run_cmd('1.2', 'list', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'VCPU'}], json.loads(result.stdout))
        self.assertEqual(['placement 1.2'], self.versions_sent())

    def test_needs_1_2(self):
        self.assert_gate(self.run_cmd('1.1', 'list'), '1.1', '1.2')


class TestCreateResourceClass(ResourceClassTestCase):

    def test_posts_the_name_and_prints_nothing(self):
        self.transport.post(self.url(), status_code=201)
        result = self.run_cmd('1.2', 'create', 'CUSTOM_FPGA')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        request = self.transport.last_request
        self.assertEqual(('POST', '/resource_classes'),
                         (request.method, request.path))
        self.assertEqual({'name': 'CUSTOM_FPGA'}, request.json())
        self.assertEqual(['placement 1.2'], self.versions_sent())

    def test_needs_1_2(self):
        self.assert_gate(self.run_cmd('1.1', 'create', 'CUSTOM_FPGA'),
                         '1.1', '1.2')

    def test_bad_name_is_the_server_text(self):
        self.transport.post(self.url(), status_code=400, json=(
            fakes.placement_error(
                400, 'Bad Request', "JSON does not validate: 'FPGA' does "
                "not match '^CUSTOM_[A-Z0-9_]+$'")))
        result = self.run_cmd('1.2', 'create', 'FPGA')
        self.assertEqual(1, result.code)
        self.assertEqual("JSON does not validate: 'FPGA' does not match "
                         "'^CUSTOM_[A-Z0-9_]+$' (HTTP 400)",
                         result.stderr.strip())


class TestSetResourceClass(ResourceClassTestCase):

    def test_puts_without_body(self):
        self.transport.put(self.url('/CUSTOM_FPGA'), status_code=204)
        result = self.run_cmd('1.7', 'set', 'CUSTOM_FPGA')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual([('PUT', '/resource_classes/custom_fpga')],
                         self.paths_sent())
        self.assertIsNone(self.transport.last_request.body)
        self.assertEqual(['placement 1.7'], self.versions_sent())

    def test_needs_1_7(self):
        self.assert_gate(self.run_cmd('1.6', 'set', 'CUSTOM_FPGA'),
                         '1.6', '1.7')


class TestShowResourceClass(ResourceClassTestCase):

    def test_json_and_table(self):
        self.transport.get(self.url('/CUSTOM_FPGA'), json={
            'name': 'CUSTOM_FPGA', 'links': []})
        result = self.run_cmd('1.2', 'show', 'CUSTOM_FPGA', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual({'name': 'CUSTOM_FPGA'}, json.loads(result.stdout))
        table = self.run_cmd('1.2', 'show', 'CUSTOM_FPGA').stdout
        self.assertIn('| name  | CUSTOM_FPGA |', table)
        self.assertIn('| Field | Value       |', table)

    def test_unknown_class(self):
        self.transport.get(self.url('/CUSTOM_NO'), status_code=404, json=(
            fakes.placement_error(404, 'Not Found',
                                  'No such resource class CUSTOM_NO.')))
        result = self.run_cmd('1.2', 'show', 'CUSTOM_NO')
        self.assertEqual(1, result.code)
        self.assertEqual('No such resource class CUSTOM_NO. (HTTP 404)',
                         result.stderr.strip())

    def test_needs_1_2(self):
        self.assert_gate(self.run_cmd('1.1', 'show', 'VCPU'), '1.1', '1.2')


class TestDeleteResourceClass(ResourceClassTestCase):

    def test_deletes(self):
        self.transport.delete(self.url('/CUSTOM_FPGA'), status_code=204)
        result = self.run_cmd('1.2', 'delete', 'CUSTOM_FPGA')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual([('DELETE', '/resource_classes/custom_fpga')],
                         self.paths_sent())

    def test_standard_class(self):
        self.transport.delete(self.url('/VCPU'), status_code=400, json=(
            fakes.placement_error(400, 'Bad Request',
                                  'Cannot delete standard resource class '
                                  'VCPU: ')))
        result = self.run_cmd('1.2', 'delete', 'VCPU')
        self.assertEqual(1, result.code)
        self.assertEqual('Cannot delete standard resource class VCPU: '
                         '(HTTP 400)', result.stderr.strip())

    def test_needs_1_2(self):
        self.assert_gate(self.run_cmd('1.1', 'delete', 'CUSTOM_FPGA'),
                         '1.1', '1.2')
