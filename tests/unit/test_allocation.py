# SPDX-License-Identifier: Apache-2.0
import json

from osc_lib import exceptions
import testtools

from osc_placement.resources import allocation
from tests.unit import fakes
from tests.unit import shell

CONSUMER = '11111111-2222-3333-4444-555555555555'
RP1 = 'aaaaaaaa-0000-0000-0000-000000000001'
RP2 = 'aaaaaaaa-0000-0000-0000-000000000002'
PROJECT = 'p' * 32
USER = 'u' * 32
CONSUMER_PATH = '/allocations/' + CONSUMER
CONSUMER_URL = fakes.ENDPOINT + CONSUMER_PATH


def consumer_body(allocations, **consumer):
    body = {'allocations': allocations}
    body.update(consumer)
    return body


def share(generation, **resources):
    return {'generation': generation, 'resources': resources}


class TestParseAllocations(testtools.TestCase):

    def test_merges_strings_for_one_provider(self):
        self.assertEqual(
            {RP1: {'VCPU': 2, 'MEMORY_MB': 512}, RP2: {'VGPU': 1}},
            allocation.parse_allocations([
                'rp=%s,VCPU=2' % RP1, 'rp=%s,VGPU=1' % RP2,
                'rp=%s,MEMORY_MB=512,VCPU=2' % RP1]))

    def assert_error(self, text, strings):
        error = self.assertRaises(exceptions.CommandError,
                                  allocation.parse_allocations, strings)
        self.assertEqual(text, str(error))

    def test_conflicting_amounts(self):
        self.assert_error(
            'Conflict detected for resource provider %s resource class '
            'VCPU' % RP1, ['rp=%s,VCPU=2' % RP1, 'rp=%s,VCPU=3' % RP1])

    def test_needs_equals_and_comma(self):
        self.assert_error('Incorrect allocation string format',
                          ['rp=%s' % RP1])
        self.assert_error('Incorrect allocation string format',
                          ['VCPU,2'])

    def test_provider_is_required(self):
        self.assert_error('Resource provider parameter is required for '
                          'allocation string', ['VCPU=1,DISK_GB=2'])

    def test_pieces_must_be_pairs(self):
        self.assert_error("Incorrect allocation string format: "
                          "'VCPU=1=2' is not of the form <key>=<value>",
                          ['rp=%s,VCPU=1=2' % RP1])

    def test_amounts_are_integers(self):
        self.assert_error("Incorrect allocation string format: the amount "
                          "of VCPU must be an integer, not 'two'",
                          ['rp=%s,VCPU=two' % RP1])


class TestRemoveAllocations(testtools.TestCase):

    allocations = {RP1: share(1, VCPU=2, MEMORY_MB=512),
                   RP2: share(4, VCPU=1)}

    def test_everything(self):
        self.assertEqual({}, allocation.remove_allocations(
            self.allocations, [], []))

    def test_providers(self):
        self.assertEqual({RP2: share(4, VCPU=1)},
                         allocation.remove_allocations(
                             self.allocations, [RP1, 'missing'], []))

    def test_classes_everywhere_drop_emptied_providers(self):
        self.assertEqual({RP1: share(1, MEMORY_MB=512)},
                         allocation.remove_allocations(
                             self.allocations, [], ['VCPU', 'DISK_GB']))

    def test_classes_of_some_providers(self):
        self.assertEqual({RP1: share(1, MEMORY_MB=512),
                          RP2: share(4, VCPU=1)},
                         allocation.remove_allocations(
                             self.allocations, [RP1], ['VCPU']))
        # The input is left alone.
        self.assertEqual(2, self.allocations[RP1]['resources']['VCPU'])


class AllocationTestCase(fakes.TransportTestCase):

    def run_cmd(self, version, *argv):
        prefix = ('--os-placement-api-version', version) if version else ()
        return shell.run_openstack(self, *prefix, 'resource', 'provider',
                                   'allocation', *argv)

    def json_output(self, result):
        self.assertEqual(0, result.code, result.stderr)
        return json.loads(result.stdout)

    def requests(self):
        return [(r.method, r.path) for r in self.transport.request_history]

    def bodies(self, method):
        return [r.json() for r in self.transport.request_history
                if r.method == method]


class TestSetAllocation(AllocationTestCase):

    def set_args(self, *extra):
        return ('set', CONSUMER, '--allocation', 'rp=%s,VCPU=2' % RP1,
                '--allocation', 'rp=%s,VGPU=1' % RP2) + extra

    def serve_result(self, **consumer):
        self.transport.put(CONSUMER_URL, status_code=204)
        self.transport.get(CONSUMER_URL, json=consumer_body(
            {RP1: share(3, VCPU=2), RP2: share(5, VGPU=1)}, **consumer))

    def test_1_0_sends_a_list_and_shows_three_columns(self):
        self.serve_result()
        rows = self.json_output(self.run_cmd('1.0', *self.set_args(
            '-f', 'json')))
        self.assertEqual([('PUT', CONSUMER_PATH), ('GET', CONSUMER_PATH)],
                         self.requests())
        self.assertEqual([{'allocations': [
            {'resource_provider': {'uuid': RP1}, 'resources': {'VCPU': 2}},
            {'resource_provider': {'uuid': RP2}, 'resources': {'VGPU': 1}},
        ]}], self.bodies('PUT'))
        self.assertEqual([
            {'resource_provider': RP1, 'generation': 3,
             'resources': {'VCPU': 2}},
            {'resource_provider': RP2, 'generation': 5,
             'resources': {'VGPU': 1}}], rows)
        self.assertEqual(['placement 1.0'] * 2, self.versions_sent())

    def test_below_1_8_identity_options_only_warn(self):
        self.serve_result()
        result = self.run_cmd('1.7', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER,
            '--consumer-type', 'INSTANCE'))
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(
            ['--project-id and --user-id options do not affect allocation '
             'for --os-placement-api-version less than 1.8',
             '--consumer-type option does not affect allocation for '
             '--os-placement-api-version less than 1.38'],
            result.stderr.strip().splitlines())
        self.assertNotIn('project_id', self.bodies('PUT')[0])

    def test_1_8_list_with_project_and_user(self):
        self.serve_result()
        result = self.run_cmd('1.8', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER))
        self.assertEqual(0, result.code, result.stderr)
        body = self.bodies('PUT')[0]
        self.assertIsInstance(body['allocations'], list)
        self.assertEqual((PROJECT, USER), (body['project_id'],
                                           body['user_id']))

    def test_1_12_sends_a_dict_and_shows_project_and_user(self):
        self.serve_result(project_id=PROJECT, user_id=USER)
        rows = self.json_output(self.run_cmd('1.12', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER, '-f', 'json')))
        self.assertEqual([{
            'allocations': {RP1: {'resources': {'VCPU': 2}},
                            RP2: {'resources': {'VGPU': 1}}},
            'project_id': PROJECT, 'user_id': USER}], self.bodies('PUT'))
        self.assertEqual(['resource_provider', 'generation', 'resources',
                          'project_id', 'user_id'], list(rows[0]))
        self.assertEqual(PROJECT, rows[1]['project_id'])

    def test_1_28_reads_the_consumer_generation_first(self):
        self.transport.get(CONSUMER_URL, [
            {'json': consumer_body({}, consumer_generation=None)},
            {'json': consumer_body({RP1: share(3, VCPU=2)},
                                   consumer_generation=1,
                                   project_id=PROJECT, user_id=USER)}])
        self.transport.put(CONSUMER_URL, status_code=204)
        result = self.run_cmd('1.28', 'set', CONSUMER, '--allocation',
                              'rp=%s,VCPU=2' % RP1, '--project-id', PROJECT,
                              '--user-id', USER)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('GET', CONSUMER_PATH), ('PUT', CONSUMER_PATH),
                          ('GET', CONSUMER_PATH)], self.requests())
        self.assertEqual([{'allocations': {RP1: {'resources': {'VCPU': 2}}},
                           'consumer_generation': None,
                           'project_id': PROJECT, 'user_id': USER}],
                         self.bodies('PUT'))

    def test_generation_conflict_is_reported_not_retried(self):
        self.transport.get(CONSUMER_URL, json=consumer_body(
            {}, consumer_generation=4))
        self.transport.put(CONSUMER_URL, status_code=409, json=(
            fakes.placement_error(409, 'Conflict', 'consumer generation '
                                  'conflict - expected 4 but got 5',
                                  'placement.concurrent_update')))
        result = self.run_cmd('1.28', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER))
        self.assertEqual(1, result.code)
        self.assertEqual('consumer generation conflict - expected 4 but '
                         'got 5 (HTTP 409)', result.stderr.strip())
        self.assertEqual(1, len(self.bodies('PUT')))

    def test_1_38_sends_and_shows_the_consumer_type(self):
        self.transport.get(CONSUMER_URL, [
            {'json': consumer_body({}, consumer_generation=None)},
            {'json': consumer_body({RP1: share(3, VCPU=2)},
                                   consumer_generation=1,
                                   project_id=PROJECT, user_id=USER,
                                   consumer_type='INSTANCE')}])
        self.transport.put(CONSUMER_URL, status_code=204)
        result = self.run_cmd('1.38', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER,
            '--consumer-type', 'INSTANCE'))
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('INSTANCE', self.bodies('PUT')[0]['consumer_type'])
        header = result.stdout.splitlines()[1]
        self.assertEqual(['resource_provider', 'generation', 'resources',
                          'project_id', 'user_id', 'consumer_type'],
                         [cell.strip() for cell in header.split('|')[1:-1]])
        self.assertIn("| {'VCPU': 2} |", result.stdout)

    def test_explicit_1_38_requires_consumer_type_in_argparse(self):
        result = self.run_cmd('1.38', *self.set_args(
            '--project-id', PROJECT, '--user-id', USER))
        self.assertEqual(2, result.code)
        self.assertTrue(result.stderr.strip().endswith(
            'error: the following arguments are required: --consumer-type'))
        self.assertEqual([], self.transport.request_history)

    def test_explicit_1_8_requires_project_and_user(self):
        result = self.run_cmd('1.8', *self.set_args())
        self.assertEqual(2, result.code)
        self.assertTrue(result.stderr.strip().endswith(
            ' resource provider allocation set: error: the following '
            'arguments are required: --project-id, --user-id'))
        self.assertEqual([], self.transport.request_history)

    def test_negotiated_version_decides_after_negotiating(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.28'))
        result = self.run_cmd(None, *self.set_args())
        self.assertEqual(2, result.code)
        # The program name is argv[0]: "openstack" in a shell.
        self.assertTrue(result.stderr.strip().endswith(
            ' resource provider allocation set: error: the following '
            'arguments are required: --project-id, --user-id'))
        # Only the negotiation: the parser itself sent nothing.
        self.assertEqual([('GET', '/')], self.requests())

    def test_negotiated_old_server_needs_no_project(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.7'))
        self.serve_result()
        result = self.run_cmd(None, *self.set_args())
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['placement 1.39', 'placement 1.7',
                          'placement 1.7'], self.versions_sent())

    def test_negotiated_1_39_writes_untyped_at_1_37(self):
        # An upstream script gives project and user but no consumer type.
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        self.transport.get(CONSUMER_URL, json={'allocations': {}})
        self.serve_result(project_id=PROJECT, user_id=USER)
        result = self.run_cmd(None, *self.set_args(
            '--project-id', PROJECT, '--user-id', USER, '-f', 'json'))
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['placement 1.39'] + ['placement 1.37'] * 3,
                         self.versions_sent())
        put, = self.bodies('PUT')
        self.assertNotIn('consumer_type', put)
        self.assertEqual({'resource_provider', 'generation', 'resources',
                          'project_id', 'user_id'},
                         set(json.loads(result.stdout)[0]))

    def test_negotiated_with_consumer_type_uses_the_server_maximum(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        self.transport.get(CONSUMER_URL, json={'allocations': {}})
        self.serve_result(project_id=PROJECT, user_id=USER,
                          consumer_type='INSTANCE')
        result = self.run_cmd(None, *self.set_args(
            '--project-id', PROJECT, '--user-id', USER, '--consumer-type',
            'INSTANCE'))
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['placement 1.39'] * 4, self.versions_sent())
        self.assertEqual('INSTANCE', self.bodies('PUT')[0]['consumer_type'])

    def test_help_sends_nothing(self):
        result = self.run_cmd(None, 'set', '--help')
        self.assertEqual(0, result.code)
        self.assertIn('--consumer-type consumer_type', result.stdout)
        self.assertEqual([], self.transport.request_history)

    def test_help_at_explicit_1_38_shows_required_options(self):
        result = self.run_cmd('1.38', 'set', '--help')
        self.assertEqual(0, result.code)
        usage = ' '.join(result.stdout.split())
        self.assertIn('--project-id project_id --user-id user_id '
                      '--consumer-type consumer_type', usage)
        self.assertNotIn('[--project-id', usage)
        self.assertEqual([], self.transport.request_history)

    def test_no_allocation(self):
        result = self.run_cmd('1.0', 'set', CONSUMER)
        self.assertEqual(1, result.code)
        self.assertEqual('At least one resource allocation must be '
                         'specified', result.stderr.strip())
        self.assertEqual([], self.transport.request_history)

    def test_bad_allocation_string_sends_nothing(self):
        result = self.run_cmd('1.28', 'set', CONSUMER, '--allocation',
                              'VCPU=1,MEMORY_MB=1', '--project-id', PROJECT,
                              '--user-id', USER)
        self.assertEqual(1, result.code)
        self.assertEqual('Resource provider parameter is required for '
                         'allocation string', result.stderr.strip())
        self.assertEqual([], self.transport.request_history)


class TestShowAllocation(AllocationTestCase):

    body = consumer_body({RP1: share(2, VCPU=1)}, project_id=PROJECT,
                         user_id=USER, consumer_type='unknown',
                         consumer_generation=1)

    def show(self, version):
        self.transport.get(CONSUMER_URL, json=self.body)
        return self.json_output(self.run_cmd(version, 'show', CONSUMER,
                                             '-f', 'json'))

    def test_columns_below_1_12(self):
        self.assertEqual([{'resource_provider': RP1, 'generation': 2,
                           'resources': {'VCPU': 1}}], self.show('1.11'))

    def test_columns_at_1_12(self):
        self.assertEqual([{'resource_provider': RP1, 'generation': 2,
                           'resources': {'VCPU': 1}, 'project_id': PROJECT,
                           'user_id': USER}], self.show('1.12'))

    def test_columns_at_1_38(self):
        row, = self.show('1.38')
        self.assertEqual('unknown', row['consumer_type'])
        self.assertEqual(['placement 1.38'], self.versions_sent())

    def test_negotiated_shows_upstream_columns(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        row, = self.show(None)
        self.assertNotIn('consumer_type', row)
        self.assertEqual(['placement 1.39', 'placement 1.37'],
                         self.versions_sent())

    def test_table_at_1_12(self):
        self.transport.get(CONSUMER_URL, json=self.body)
        result = self.run_cmd('1.12', 'show', CONSUMER)
        self.assertEqual(0, result.code, result.stderr)
        header, row = result.stdout.splitlines()[1], result.stdout.splitlines(
        )[3]
        self.assertEqual(['resource_provider', 'generation', 'resources',
                          'project_id', 'user_id'],
                         [cell.strip() for cell in header.split('|')[1:-1]])
        self.assertEqual([RP1, '2', "{'VCPU': 1}", PROJECT, USER],
                         [cell.strip() for cell in row.split('|')[1:-1]])

    def test_unknown_consumer_is_empty(self):
        self.transport.get(CONSUMER_URL, json={'allocations': {}})
        self.assertEqual([], self.json_output(self.run_cmd(
            '1.12', 'show', CONSUMER, '-f', 'json')))


class TestDeleteAllocation(AllocationTestCase):

    def test_deletes(self):
        self.transport.delete(CONSUMER_URL, status_code=204)
        result = self.run_cmd('1.0', 'delete', CONSUMER)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual([('DELETE', CONSUMER_PATH)], self.requests())

    def test_unknown_consumer(self):
        self.transport.delete(CONSUMER_URL, status_code=404, json=(
            fakes.placement_error(404, 'Not Found', "No allocations for "
                                  "consumer '%s'" % CONSUMER)))
        result = self.run_cmd('1.0', 'delete', CONSUMER)
        self.assertEqual(1, result.code)
        self.assertEqual("No allocations for consumer '%s' (HTTP 404)"
                         % CONSUMER, result.stderr.strip())


class TestUnsetAllocation(AllocationTestCase):

    def serve(self, before, after):
        self.transport.get(CONSUMER_URL, [{'json': before}, {'json': after}])
        self.transport.put(CONSUMER_URL, status_code=204)
        self.transport.delete(CONSUMER_URL, status_code=204)

    def test_needs_1_12(self):
        result = self.run_cmd('1.11', 'unset', CONSUMER)
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.11; requires at least version 1.12',
                         result.stderr.strip())
        self.assertEqual([], self.transport.request_history)

    def test_1_12_puts_back_what_remains(self):
        before = consumer_body({RP1: share(2, VCPU=1), RP2: share(3, VGPU=1)},
                               project_id=PROJECT, user_id=USER)
        after = consumer_body({RP2: share(3, VGPU=1)}, project_id=PROJECT,
                              user_id=USER)
        self.serve(before, after)
        rows = self.json_output(self.run_cmd(
            '1.12', 'unset', CONSUMER, '--provider', RP1, '-f', 'json'))
        self.assertEqual([('GET', CONSUMER_PATH), ('PUT', CONSUMER_PATH),
                          ('GET', CONSUMER_PATH)], self.requests())
        self.assertEqual([dict(before, allocations={RP2: share(3, VGPU=1)})],
                         self.bodies('PUT'))
        self.assertEqual([{'resource_provider': RP2, 'generation': 3,
                           'resources': {'VGPU': 1}, 'project_id': PROJECT,
                           'user_id': USER}], rows)

    def test_1_12_deletes_when_nothing_remains(self):
        before = consumer_body({RP1: share(2, VCPU=1)}, project_id=PROJECT,
                               user_id=USER)
        self.serve(before, {'allocations': {}})
        rows = self.json_output(self.run_cmd(
            '1.12', 'unset', CONSUMER, '--resource-class', 'VCPU',
            '-f', 'json'))
        self.assertEqual([('GET', CONSUMER_PATH), ('DELETE', CONSUMER_PATH),
                          ('GET', CONSUMER_PATH)], self.requests())
        self.assertEqual([], rows)

    def test_1_28_puts_empty_allocations_with_the_generation(self):
        before = consumer_body({RP1: share(2, VCPU=1)}, project_id=PROJECT,
                               user_id=USER, consumer_generation=6)
        self.serve(before, {'allocations': {}})
        result = self.run_cmd('1.28', 'unset', CONSUMER)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([dict(before, allocations={})], self.bodies('PUT'))

    def test_1_28_unknown_consumer_is_one_readable_line(self):
        self.transport.get(CONSUMER_URL, json={'allocations': {}})
        result = self.run_cmd('1.28', 'unset', CONSUMER)
        self.assertEqual(1, result.code)
        self.assertEqual("No allocations for consumer '%s'" % CONSUMER,
                         result.stderr.strip())
        self.assertEqual([('GET', CONSUMER_PATH)], self.requests())

    def test_1_38_keeps_the_consumer_type(self):
        before = consumer_body({RP1: share(2, VCPU=1, DISK_GB=5)},
                               project_id=PROJECT, user_id=USER,
                               consumer_generation=6,
                               consumer_type='MIGRATION')
        after = dict(before, allocations={RP1: share(3, DISK_GB=5)})
        self.serve(before, after)
        result = self.run_cmd('1.38', 'unset', CONSUMER, '--resource-class',
                              'VCPU', '-f', 'json')
        rows = self.json_output(result)
        written = dict(before, allocations={RP1: share(2, DISK_GB=5)})
        self.assertEqual([written], self.bodies('PUT'))
        self.assertEqual(['placement 1.38'] * 3, self.versions_sent())
        self.assertEqual('MIGRATION', rows[0]['consumer_type'])

    def test_1_38_untyped_consumer_is_written_at_1_37(self):
        before = consumer_body({RP1: share(2, VCPU=1), RP2: share(1, VGPU=1)},
                               project_id=PROJECT, user_id=USER,
                               consumer_generation=6,
                               consumer_type='unknown')
        self.serve(before, before)
        result = self.run_cmd('1.38', 'unset', CONSUMER, '--provider', RP2)
        self.assertEqual(0, result.code, result.stderr)
        put, = self.bodies('PUT')
        self.assertNotIn('consumer_type', put)
        self.assertEqual(['placement 1.38', 'placement 1.37',
                          'placement 1.38'], self.versions_sent())

    def test_consumer_type_option_changes_the_type(self):
        before = consumer_body({RP1: share(2, VCPU=1), RP2: share(1, VGPU=1)},
                               project_id=PROJECT, user_id=USER,
                               consumer_generation=6,
                               consumer_type='unknown')
        self.serve(before, before)
        result = self.run_cmd('1.38', 'unset', CONSUMER, '--provider', RP2,
                              '--consumer-type', 'INSTANCE')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('INSTANCE', self.bodies('PUT')[0]['consumer_type'])
        self.assertEqual(['placement 1.38'] * 3, self.versions_sent())

    def test_consumer_type_option_needs_1_38(self):
        result = self.run_cmd('1.37', 'unset', CONSUMER, '--consumer-type',
                              'INSTANCE')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.37; requires at least version 1.38',
                         result.stderr.strip())
        self.assertEqual([], self.transport.request_history)

    def test_conflict_is_reported(self):
        before = consumer_body({RP1: share(2, VCPU=1)}, project_id=PROJECT,
                               user_id=USER, consumer_generation=6)
        self.transport.get(CONSUMER_URL, json=before)
        self.transport.put(CONSUMER_URL, status_code=409, json=(
            fakes.placement_error(409, 'Conflict', 'consumer generation '
                                  'conflict - expected 6 but got 7')))
        result = self.run_cmd('1.28', 'unset', CONSUMER)
        self.assertEqual(1, result.code)
        self.assertEqual('consumer generation conflict - expected 6 but got '
                         '7 (HTTP 409)', result.stderr.strip())
