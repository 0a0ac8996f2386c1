# SPDX-License-Identifier: Apache-2.0
import io

import fixtures
import testtools

from osc_placement.resources import common
from osc_placement.resources import inventory
from tests.unit import commands
from tests.unit.commands import AGG
from tests.unit.commands import url
from tests.unit.commands import UUID1
from tests.unit.commands import UUID2
from tests.unit.commands import UUID3
from tests.unit import fakes

RP_URL = url('/resource_providers')
COLUMNS = ['resource_class', 'allocation_ratio', 'min_unit', 'max_unit',
           'reserved', 'step_size', 'total']
DEFAULTS = {'allocation_ratio': 1.0, 'min_unit': 1, 'max_unit': 2147483647,
            'reserved': 0, 'step_size': 1}


def inventories_url(uuid):
    return url('/resource_providers/%s/inventories' % uuid)


def inventories_path(uuid):
    return '/resource_providers/%s/inventories' % uuid


def full(**fields):
    return dict(DEFAULTS, **fields)


def inventories(generation, **by_class):
    return {'resource_provider_generation': generation,
            'inventories': {rc: full(**fields)
                            for rc, fields in by_class.items()}}


def generation_conflict():
    return commands.error(
        409, "resource provider generation conflict",
        code='placement.concurrent_update')


class TestParseResource(testtools.TestCase):

    def test_bare_value_is_total(self):
        self.assertEqual(('VCPU', 'total', 8),
                         inventory.parse_resource_argument('VCPU=8'))

    def test_field_types(self):
        self.assertEqual(('VCPU', 'allocation_ratio', 16.0),
                         inventory.parse_resource_argument(
                             'VCPU:allocation_ratio=16'))
        self.assertEqual(('DISK_GB', 'step_size', 10),
                         inventory.parse_resource_argument(
                             'DISK_GB:step_size=10'))

    def test_upstream_error_texts(self):
        cases = {
            'VCPU': 'Resource argument must have "name=value" format',
            'VCPU=1=2': 'Resource argument must have "name=value" format',
            'VCPU:a:b=1': 'Resource argument can contain only one colon',
            'VCPU=': 'Name, field and value must be not empty',
            '=1': 'Name, field and value must be not empty',
            'VCPU:=1': 'Name, field and value must be not empty',
            'VCPU:foo=1': 'Unknown inventory field foo',
        }
        for text, message in cases.items():
            error = self.assertRaises(
                ValueError, inventory.parse_resource_argument, text)
            self.assertEqual(message, str(error), text)

    def test_bad_numbers_are_one_readable_line(self):
        error = self.assertRaises(ValueError,
                                  inventory.parse_resource_argument,
                                  'VCPU=many')
        self.assertEqual('Resource argument VCPU=many: total must be an '
                         'integer', str(error))
        error = self.assertRaises(ValueError,
                                  inventory.parse_resource_argument,
                                  'VCPU:allocation_ratio=x')
        self.assertIn('allocation_ratio must be a number', str(error))


class TestSetOneProvider(commands.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.transport.get(RP_URL + '/' + UUID1,
                           json=commands.provider(UUID1, generation=4))

    def test_replaces_with_what_was_given(self):
        self.transport.put(inventories_url(UUID1), json=inventories(
            5, VCPU={'total': 8, 'allocation_ratio': 4.0},
            MEMORY_MB={'total': 1024}))
        result = self.run_cmd(
            'resource', 'provider', 'inventory', 'set', UUID1,
            '--resource', 'VCPU=8', '--resource', 'VCPU:allocation_ratio=4',
            '--resource', 'MEMORY_MB=1024', '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual([
            ('GET', '/resource_providers/' + UUID1, {}, None),
            ('PUT', inventories_path(UUID1), {},
             {'resource_provider_generation': 4,
              'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 4.0},
                              'MEMORY_MB': {'total': 1024}}})],
            self.sent())
        output = self.json_out(result)
        self.assertEqual([COLUMNS, COLUMNS], [list(row) for row in output])
        self.assertEqual(dict(full(total=8, allocation_ratio=4.0),
                              resource_class='VCPU'), output[0])

    def test_table(self):
        self.transport.put(inventories_url(UUID1),
                           json=inventories(5, VCPU={'total': 64}))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU=64')
        self.assert_ok(result)
        self.assertIn('| resource_class | allocation_ratio | min_unit |   '
                      'max_unit | reserved | step_size | total |',
                      result.stdout)
        self.assertIn('| VCPU           |              1.0 |        1 | '
                      '2147483647 |        0 |         1 |    64 |',
                      result.stdout)

    def test_amend_merges_into_current(self):
        self.transport.get(inventories_url(UUID1), json=inventories(
            6, VCPU={'total': 8}, DISK_GB={'total': 100}))
        self.transport.put(inventories_url(UUID1), json=inventories(7))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--amend',
                              '--resource', 'VCPU:reserved=1',
                              '--resource', 'MEMORY_MB=512')
        self.assert_ok(result)
        self.assertEqual(
            {'resource_provider_generation': 6,
             'inventories': {'VCPU': full(total=8, reserved=1),
                             'DISK_GB': full(total=100),
                             'MEMORY_MB': {'total': 512}}},
            self.bodies('PUT')[0])

    def test_dry_run_writes_nothing_and_shows_empty_fields(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU=8', '--dry-run',
                              '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(['GET'], [r[0] for r in self.sent()])
        self.assertEqual([{'resource_class': 'VCPU', 'allocation_ratio': '',
                           'min_unit': '', 'max_unit': '', 'reserved': '',
                           'step_size': '', 'total': 8}],
                         self.json_out(result))

    def test_no_resource_clears(self):
        self.transport.put(inventories_url(UUID1), json=inventories(5))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1)
        self.assert_ok(result)
        self.assertEqual({'resource_provider_generation': 4,
                          'inventories': {}}, self.bodies('PUT')[0])

    def test_bad_resource_fails_before_any_request(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU:foo=1')
        self.assertEqual(1, result.code)
        self.assertEqual('Unknown inventory field foo', result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_generation_conflict_is_reread_and_retried(self):
        self.transport.put(inventories_url(UUID1), [
            generation_conflict(), {'json': inventories(9)}])
        self.transport.get(inventories_url(UUID1), json=inventories(8))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU=8')
        self.assert_ok(result)
        self.assertEqual([4, 8], [body['resource_provider_generation']
                                  for body in self.bodies('PUT')])

    def test_other_conflicts_are_not_retried(self):
        self.transport.put(inventories_url(UUID1), **commands.error(
            409, "update conflict: Inventory for 'VCPU' on resource provider "
                 "'%s' in use." % UUID1, code='placement.inventory.inuse'))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'MEMORY_MB=8')
        self.assertEqual(1, result.code)
        self.assertEqual("update conflict: Inventory for 'VCPU' on resource "
                         "provider '%s' in use. (HTTP 409)" % UUID1,
                         result.stderr.strip())
        self.assertEqual(1, len(self.bodies('PUT')))

    def test_conflict_before_error_codes_is_recognised_by_text(self):
        self.transport.put(inventories_url(UUID1), [
            {'status_code': 409, 'json': {'errors': [{
                'status': 409, 'title': 'Conflict',
                'detail': 'resource provider generation conflict'}]}},
            {'json': inventories(9)}])
        self.transport.get(inventories_url(UUID1), json=inventories(8))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU=8', version='1.0')
        self.assert_ok(result)
        self.assertEqual(2, len(self.bodies('PUT')))

    def test_gives_up_after_max_attempts(self):
        self.transport.put(inventories_url(UUID1), **generation_conflict())
        self.transport.get(inventories_url(UUID1), json=inventories(8))
        result = self.run_cmd('resource', 'provider', 'inventory', 'set',
                              UUID1, '--resource', 'VCPU=8')
        self.assertEqual(1, result.code)
        self.assertEqual('resource provider generation conflict (HTTP 409)',
                         result.stderr.strip())
        self.assertEqual(inventory.MAX_ATTEMPTS, len(self.bodies('PUT')))


class TestSetAggregate(commands.CommandTestCase):

    providers = (UUID1, UUID2, UUID3)

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.resources.common.SERVER_ERROR_BACKOFF', 0))

    def given_members(self, uuids=providers, sharing=()):
        """Members listed (those in ``sharing`` also by the listing of
        sharing providers), each read with no inventory at generation = its
        position (a test may answer differently)."""
        self.transport.get(RP_URL, json={'resource_providers': [
            commands.provider(uuid, generation=index)
            for index, uuid in enumerate(uuids)]})
        self.transport.get(RP_URL + '?required=MISC_SHARES_VIA_AGGREGATE',
                           json={'resource_providers': [
                               commands.provider(uuid) for uuid in sharing]})
        for index, uuid in enumerate(uuids):
            self.transport.get(inventories_url(uuid),
                               json=inventories(index))

    def given_puts_succeed(self, uuids=providers):
        for uuid in uuids:
            self.transport.put(inventories_url(uuid),
                               json=inventories(10, VCPU={'total': 8}))

    def set_inventory(self, *argv, version='1.3'):
        return self.run_cmd('resource', 'provider', 'inventory', 'set', AGG,
                            '--aggregate', *argv, version=version)

    def test_sets_every_member_in_listed_order(self):
        self.given_members()
        self.given_puts_succeed()
        result = self.set_inventory('--resource', 'VCPU=8', '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(('GET', '/resource_providers',
                          {'member_of': [AGG]}, None), self.sent()[0])
        puts = sorted((path, body['resource_provider_generation'])
                      for method, path, _, body in self.sent()
                      if method == 'PUT')
        self.assertEqual([(inventories_path(uuid), index)
                          for index, uuid in enumerate(self.providers)],
                         puts)
        output = self.json_out(result)
        self.assertEqual(['resource_provider'] + COLUMNS, list(output[0]))
        self.assertEqual(list(self.providers),
                         [row['resource_provider'] for row in output])
        self.assertEqual('', result.stderr)

    def test_order_is_deterministic_with_many_providers(self):
        uuids = ['%08d-0000-0000-0000-000000000000' % n for n in range(60)]
        self.given_members(uuids)
        self.given_puts_succeed(uuids)
        result = self.set_inventory('--resource', 'VCPU=8', '-f', 'value',
                                    '-c', 'resource_provider')
        self.assert_ok(result)
        self.assertEqual(uuids, result.stdout.split())

    def test_needs_1_3(self):
        result = self.set_inventory('--resource', 'VCPU=8', version='1.2')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.2; requires at least version 1.3',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_empty_aggregate(self):
        self.given_members(())
        result = self.set_inventory('--resource', 'VCPU=8')
        self.assertEqual(1, result.code)
        self.assertEqual('No resource providers found in aggregate with '
                         'uuid %s.' % AGG, result.stderr.strip())

    def test_partial_failure_reports_each_and_a_summary(self):
        self.given_members()
        self.given_puts_succeed((UUID1, UUID3))
        self.transport.put(inventories_url(UUID2), **commands.error(
            409, "update conflict: Inventory for 'VCPU' on resource provider "
                 "'%s' in use." % UUID2, code='placement.inventory.inuse'))
        result = self.set_inventory('--resource', 'MEMORY_MB=8')
        self.assertEqual(1, result.code)
        self.assertEqual('', result.stdout)
        self.assertEqual(
            ["Failed to set inventory for resource provider %s: update "
             "conflict: Inventory for 'VCPU' on resource provider '%s' in "
             "use. (HTTP 409)." % (UUID2, UUID2),
             'Changed: rp (%s), rp (%s). The failed resource providers '
             'were not changed.' % (UUID1, UUID3),
             'Failed to set inventory for 1 of 3 resource providers.'],
            result.stderr.strip().splitlines())
        self.assertEqual(3, len(self.bodies('PUT')))

    def test_dry_run_writes_nothing(self):
        self.given_members()
        result = self.set_inventory('--resource', 'VCPU=8', '--dry-run',
                                    '-f', 'json')
        self.assert_ok(result)
        # The listing, its sharing providers, each member's inventories.
        self.assertEqual(['GET'] * 5, [r[0] for r in self.sent()])
        self.assertEqual([(uuid, '+', 'VCPU', 8) for uuid in self.providers],
                         [(row['resource_provider'], row['change'],
                           row['resource_class'], row['total'])
                          for row in self.json_out(result)])

    def test_amend_merges_per_provider(self):
        self.given_members((UUID1, UUID2))
        self.transport.get(inventories_url(UUID1), json=inventories(
            5, DISK_GB={'total': 10}))
        self.transport.get(inventories_url(UUID2), json=inventories(7))
        self.given_puts_succeed((UUID1, UUID2))
        result = self.set_inventory('--resource', 'VCPU=8', '--amend')
        self.assert_ok(result)
        bodies = {body['resource_provider_generation']: body['inventories']
                  for body in self.bodies('PUT')}
        self.assertEqual({5: {'DISK_GB': full(total=10),
                              'VCPU': {'total': 8}},
                          7: {'VCPU': {'total': 8}}}, bodies)

    def test_amend_conflict_merges_again_on_fresh_data(self):
        self.given_members((UUID1,))
        self.transport.get(inventories_url(UUID1), [
            {'json': inventories(5, DISK_GB={'total': 10})},
            {'json': inventories(6, DISK_GB={'total': 10},
                                 VGPU={'total': 2})}])
        self.transport.put(inventories_url(UUID1), [
            generation_conflict(), {'json': inventories(7)}])
        result = self.set_inventory('--resource', 'VCPU=8', '--amend')
        self.assert_ok(result)
        first, second = self.bodies('PUT')
        self.assertEqual(5, first['resource_provider_generation'])
        self.assertEqual(6, second['resource_provider_generation'])
        self.assertEqual({'DISK_GB', 'VGPU', 'VCPU'},
                         set(second['inventories']))

    def test_conflict_retried_in_a_batch(self):
        self.given_members()
        self.given_puts_succeed((UUID1, UUID3))
        self.transport.put(inventories_url(UUID2), [
            generation_conflict(), {'json': inventories(3)}])
        self.transport.get(inventories_url(UUID2), [
            {'json': inventories(1)}, {'json': inventories(42)}])
        result = self.set_inventory('--resource', 'VCPU=8')
        self.assert_ok(result)
        self.assertEqual(
            [1, 42], [body['resource_provider_generation']
                      for method, path, _, body in self.sent()
                      if path == inventories_path(UUID2) and method == 'PUT'])

    def test_server_error_is_retried(self):
        self.given_members((UUID1,))
        self.transport.put(inventories_url(UUID1), [
            {'status_code': 500, 'text': 'database is locked'},
            {'json': inventories(3)}])
        self.transport.get(inventories_url(UUID1), json=inventories(2))
        result = self.set_inventory('--resource', 'VCPU=8')
        self.assert_ok(result)
        self.assertEqual(2, len(self.bodies('PUT')))

    def test_negotiated_version(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        self.given_members((UUID1,))
        self.given_puts_succeed((UUID1,))
        result = self.set_inventory('--resource', 'VCPU=8', version=None)
        self.assert_ok(result)
        # Negotiation, the listing, its sharing providers, the member's
        # inventories, the write.
        self.assertEqual(['placement 1.39'] * 5, self.versions())


class _Terminal(io.StringIO):
    def isatty(self):
        return True


class TestProgress(testtools.TestCase):

    def test_only_on_a_terminal(self):
        quiet = io.StringIO()
        common.StderrProgress('Setting', quiet)(1, 2)
        self.assertEqual('', quiet.getvalue())
        terminal = _Terminal()
        progress = common.StderrProgress('Setting', terminal)
        progress(1, 2)
        progress(2, 2)
        self.assertEqual('\rSetting: 1/2\rSetting: 2/2\n',
                         terminal.getvalue())

    def test_run_concurrently_keeps_order_and_exceptions(self):
        def func(n):
            if n == 3:
                raise ValueError('three')
            return n * 2
        seen = []
        results = common.run_concurrently(
            func, range(6), workers=4,
            progress=lambda done, total: seen.append((done, total)))
        self.assertEqual([0, 2, 4], results[:3])
        self.assertIsInstance(results[3], ValueError)
        self.assertEqual([8, 10], results[4:])
        self.assertEqual([(n, 6) for n in range(1, 7)], seen)


class TestClassSet(commands.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.transport.get(RP_URL + '/' + UUID1,
                           json=commands.provider(UUID1, generation=2))

    def test_sets_one_class(self):
        self.transport.put(inventories_url(UUID1) + '/VCPU',
                           json=dict(full(total=16, max_unit=4),
                                     resource_provider_generation=3))
        result = self.run_cmd(
            'resource', 'provider', 'inventory', 'class', 'set', UUID1,
            'VCPU', '--total', '16', '--max_unit', '4',
            '--allocation_ratio', '2', '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual(
            [('GET', '/resource_providers/' + UUID1, {}, None),
             ('PUT', inventories_path(UUID1) + '/VCPU', {},
              {'resource_provider_generation': 2, 'total': 16,
               'max_unit': 4, 'allocation_ratio': 2.0})], self.sent())
        self.assertEqual(full(total=16, max_unit=4), self.json_out(result))

    def test_total_is_required(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'class',
                              'set', UUID1, 'VCPU', '--max_unit', '4')
        self.assert_fails(
            result, 'the following arguments are required: --total', code=2)
        self.assertEqual([], self.sent())

    def test_bad_number(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'class',
                              'set', UUID1, 'VCPU', '--total', 'x')
        self.assert_fails(result, "argument --total: invalid int value: 'x'",
                          code=2)

    def test_generation_conflict_retried(self):
        self.transport.put(inventories_url(UUID1) + '/VCPU', [
            generation_conflict(), {'json': full(total=1)}])
        result = self.run_cmd('resource', 'provider', 'inventory', 'class',
                              'set', UUID1, 'VCPU', '--total', '1')
        self.assert_ok(result)
        self.assertEqual(['GET', 'PUT', 'GET', 'PUT'],
                         [r[0] for r in self.sent()])


class TestListAndShow(commands.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.transport.get(inventories_url(UUID1), json=inventories(
            1, VCPU={'total': 8}, DISK_GB={'total': 100}))
        self.transport.get(inventories_url(UUID1) + '/VCPU',
                           json=dict(full(total=8),
                                     resource_provider_generation=1))
        self.transport.get(url('/resource_providers/%s/usages' % UUID1),
                           json={'usages': {'VCPU': 3, 'DISK_GB': 0},
                                 'resource_provider_generation': 1})

    def test_list_adds_used(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'list',
                              UUID1, '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual(
            [dict(full(total=8), resource_class='VCPU', used=3),
             dict(full(total=100), resource_class='DISK_GB', used=0)],
            self.json_out(result))
        self.assertEqual(COLUMNS + ['used'],
                         list(self.json_out(result)[0]))
        self.assertEqual(['GET', 'GET'], [r[0] for r in self.sent()])

    def test_show_adds_used(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'show',
                              UUID1, 'VCPU', '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(COLUMNS[1:] + ['used'],
                         list(self.json_out(result)))
        self.assertEqual(3, self.json_out(result)['used'])

    def test_show_unknown_class(self):
        self.transport.get(inventories_url(UUID1) + '/VGPU', **commands.error(
            404, 'No inventory of class VGPU for %s' % UUID1))
        result = self.run_cmd('resource', 'provider', 'inventory', 'show',
                              UUID1, 'VGPU')
        self.assertEqual(1, result.code)
        self.assertEqual('No inventory of class VGPU for %s (HTTP 404)'
                         % UUID1, result.stderr.strip())


class TestDelete(commands.CommandTestCase):

    def test_one_class(self):
        self.transport.delete(inventories_url(UUID1) + '/VCPU',
                              status_code=204)
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              UUID1, '--resource-class', 'VCPU',
                              version='1.0')
        self.assert_ok(result)
        self.assertEqual([('DELETE', inventories_path(UUID1) + '/VCPU', {},
                           None)], self.sent())

    def test_every_class_from_1_5(self):
        self.transport.delete(inventories_url(UUID1), status_code=204)
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              UUID1, version='1.5')
        self.assert_ok(result)
        self.assertEqual([('DELETE', inventories_path(UUID1), {}, None)],
                         self.sent())

    def test_class_required_below_1_5_at_parse_time(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              UUID1, version='1.4')
        self.assert_fails(result, 'error: the following arguments are '
                                  'required: --resource-class', code=2)
        self.assertEqual([], self.sent())

    def test_negotiated_below_1_5_fails_like_argparse(self):
        self.transport.get(fakes.ROOT, status_code=406,
                           json=fakes.not_acceptable('1.4'))
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              UUID1, version=None)
        self.assert_fails(result, ' resource provider inventory delete: '
                                  'error: the following arguments are '
                                  'required: --resource-class', code=2)
        self.assertEqual([('GET', '/', {}, None)], self.sent())

    def test_help_does_not_negotiate(self):
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              '--help', version=None)
        self.assert_ok(result)
        self.assertIn('--resource-class', result.stdout)
        self.assertEqual([], self.sent())

    def test_not_found(self):
        self.transport.delete(inventories_url(UUID1) + '/VCPU',
                              **commands.error(
                                  404, 'No inventory of class VCPU found for '
                                       'delete'))
        result = self.run_cmd('resource', 'provider', 'inventory', 'delete',
                              UUID1, '--resource-class', 'VCPU')
        self.assertEqual(1, result.code)
        self.assertEqual('No inventory of class VCPU found for delete '
                         '(HTTP 404)', result.stderr.strip())


class TestWorkers(testtools.TestCase):

    def test_no_more_threads_than_pooled_connections(self):
        # More would make urllib3 warn "Connection pool is full" on stderr.
        from requests import adapters
        self.assertLessEqual(inventory.WORKERS, adapters.DEFAULT_POOLSIZE)
        self.assertGreaterEqual(inventory.WORKERS, 8)


class _Failure(Exception):
    """An osc-lib-like error whose cause carries the HTTP response."""

    def __init__(self, status, body=None, text=''):
        super().__init__(text)
        self.http_status = status if status < 500 else None
        cause = Exception()
        cause.http_status = status
        cause.response = _Response(body)
        self.__cause__ = cause


class _Response:
    def __init__(self, body):
        self.body = body

    def json(self):
        if self.body is None:
            raise ValueError('not JSON')
        return self.body


class TestRetryDecisions(testtools.TestCase):

    def test_generation_conflict_by_code(self):
        conflict = _Failure(409, fakes.placement_error(
            409, 'Conflict', 'x', 'placement.concurrent_update'))
        in_use = _Failure(409, fakes.placement_error(
            409, 'Conflict', 'generation', 'placement.inventory.inuse'))
        self.assertTrue(common.is_generation_conflict(conflict))
        self.assertFalse(common.is_generation_conflict(in_use))

    def test_generation_conflict_by_text_before_1_23(self):
        self.assertTrue(common.is_generation_conflict(_Failure(
            409, text='resource provider generation conflict (HTTP 409)')))
        self.assertFalse(common.is_generation_conflict(_Failure(
            409, text="Inventory for 'VCPU' in use. (HTTP 409)")))
        self.assertFalse(common.is_generation_conflict(ValueError('x')))

    def test_server_errors_are_retryable(self):
        self.assertTrue(common.is_retryable(_Failure(503)))
        self.assertFalse(common.is_retryable(_Failure(400)))

    def test_back_off_only_after_server_errors(self):
        pauses = []
        common.back_off(_Failure(409, text='generation'), 1, pauses.append)
        self.assertEqual([], pauses)
        for attempt in range(1, 10):
            common.back_off(_Failure(500), attempt, pauses.append)
        self.assertEqual(9, len(pauses))
        self.assertTrue(all(0 < pause <= 1.5 * common.SERVER_ERROR_BACKOFF_CAP
                            for pause in pauses))
        self.assertLessEqual(pauses[0], 1.5 * common.SERVER_ERROR_BACKOFF)
