# SPDX-License-Identifier: Apache-2.0
import subprocess
import sys

import testtools

from tests.unit import commands
from tests.unit.commands import url
from tests.unit.commands import UUID1
from tests.unit.commands import UUID2


RP_URL = url('/resource_providers')
RP1_URL = url('/resource_providers/' + UUID1)
COLUMNS_1_0 = ['uuid', 'name', 'generation']
COLUMNS_1_14 = COLUMNS_1_0 + ['root_provider_uuid', 'parent_provider_uuid']


class TestCreate(commands.CommandTestCase):

    def given_old_style_create(self):
        self.transport.post(RP_URL, status_code=201,
                            headers={'Location': RP1_URL})
        self.transport.get(RP1_URL, json=commands.provider(UUID1, 'rp1'))

    def test_below_1_20_reads_the_location(self):
        self.given_old_style_create()
        result = self.run_cmd('resource', 'provider', 'create', 'rp1',
                              '--uuid', UUID1, '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual(
            [('POST', '/resource_providers', {},
              {'name': 'rp1', 'uuid': UUID1}),
             ('GET', '/resource_providers/' + UUID1, {}, None)],
            self.sent())
        self.assertEqual(['placement 1.0'] * 2, self.versions())
        self.assertEqual(COLUMNS_1_0, list(self.json_out(result)))

    def test_nested_columns_from_1_14(self):
        self.given_old_style_create()
        result = self.run_cmd('resource', 'provider', 'create', 'rp1',
                              '--parent-provider', UUID2, '-f', 'json',
                              version='1.14')
        self.assert_ok(result)
        self.assertEqual({'name': 'rp1', 'parent_provider_uuid': UUID2},
                         self.sent()[0][3])
        output = self.json_out(result)
        self.assertEqual(COLUMNS_1_14, list(output))
        self.assertIsNone(output['parent_provider_uuid'])

    def test_from_1_20_uses_the_response_body(self):
        self.transport.post(RP_URL, json=commands.provider(UUID1, 'rp1'))
        result = self.run_cmd('resource', 'provider', 'create', 'rp1',
                              version='1.20')
        self.assert_ok(result)
        self.assertEqual(1, len(self.sent()))
        self.assertIn('| parent_provider_uuid | None ', result.stdout)
        self.assertIn('| name                 | rp1  ', result.stdout)

    def test_parent_needs_1_14(self):
        result = self.run_cmd('resource', 'provider', 'create', 'rp1',
                              '--parent-provider', UUID2, version='1.13')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.13; requires at least version 1.14',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_duplicate_name(self):
        self.transport.post(RP_URL, **commands.error(
            409, 'Conflicting resource provider name: rp1 already exists.'))
        result = self.run_cmd('resource', 'provider', 'create', 'rp1')
        self.assertEqual(1, result.code)
        self.assertEqual('Conflicting resource provider name: rp1 already '
                         'exists. (HTTP 409)', result.stderr.strip())


class TestList(commands.CommandTestCase):

    def given_providers(self):
        self.transport.get(RP_URL, json={'resource_providers': [
            commands.provider(UUID1, 'rp1', 3),
            commands.provider(UUID2, 'rp2', 0, parent=UUID1)]})

    def test_columns_below_1_14(self):
        self.given_providers()
        result = self.run_cmd('resource', 'provider', 'list', '-f', 'json',
                              version='1.13')
        self.assert_ok(result)
        self.assertEqual([{'uuid': UUID1, 'name': 'rp1', 'generation': 3},
                          {'uuid': UUID2, 'name': 'rp2', 'generation': 0}],
                         self.json_out(result))

    def test_columns_from_1_14_and_value_format(self):
        self.given_providers()
        result = self.run_cmd('resource', 'provider', 'list', '-f', 'value',
                              version='1.14')
        self.assert_ok(result)
        self.assertEqual(['%s rp1 3 %s None' % (UUID1, UUID1),
                          '%s rp2 0 %s %s' % (UUID2, UUID2, UUID1)],
                         result.stdout.splitlines())

    def test_table_header(self):
        self.given_providers()
        result = self.run_cmd('resource', 'provider', 'list')
        self.assert_ok(result)
        self.assertIn('| uuid | name | generation | root_provider_uuid | '
                      'parent_provider_uuid |',
                      ' '.join(result.stdout.split()).replace('- ', ''))

    def test_every_filter(self):
        self.given_providers()
        result = self.run_cmd(
            'resource', 'provider', 'list', '--name', 'rp1', '--uuid', UUID1,
            '--resource', 'VCPU=1', '--resource', 'MEMORY_MB=512',
            '--in-tree', UUID2, '--required', 'A,B', '--required', 'C',
            '--forbidden', 'D', '--member-of', 'x,y', '--member-of', '!z')
        self.assert_ok(result)
        self.assertEqual(
            {'name': ['rp1'], 'uuid': [UUID1],
             'resources': ['VCPU:1,MEMORY_MB:512'], 'in_tree': [UUID2],
             'required': ['in:A,B', 'C,!D'], 'member_of': ['in:x,y', '!z']},
            self.sent()[0][2])

    def test_forbidden_aggregates_list(self):
        self.given_providers()
        result = self.run_cmd('resource', 'provider', 'list',
                              '--member-of', '!x,y', version='1.32')
        self.assert_ok(result)
        self.assertEqual({'member_of': ['!in:x,y']}, self.sent()[0][2])

    def test_deprecated_aggregate_uuid(self):
        self.given_providers()
        result = self.run_cmd('resource', 'provider', 'list',
                              '--aggregate-uuid', 'a', '--aggregate-uuid',
                              'b', version='1.3')
        self.assert_ok(result)
        self.assertEqual({'member_of': ['in:a,b']}, self.sent()[0][2])
        self.assertIn('The --aggregate-uuid option is deprecated, please use '
                      '--member-of instead.', result.stderr)

    def test_member_of_and_aggregate_uuid_exclude_each_other(self):
        result = self.run_cmd('resource', 'provider', 'list',
                              '--aggregate-uuid', 'a', '--member-of', 'b')
        self.assert_fails(result, 'not allowed with argument', code=2)

    def test_gates(self):
        cases = [
            (('--aggregate-uuid', 'a'), '1.2', '1.3'),
            (('--resource', 'VCPU=1'), '1.3', '1.4'),
            (('--in-tree', UUID1), '1.13', '1.14'),
            (('--required', 'A'), '1.17', '1.18'),
            (('--required', 'A,B'), '1.38', '1.39'),
            (('--forbidden', 'A'), '1.21', '1.22'),
            (('--member-of', 'a'), '1.2', '1.3'),
            (('--member-of', '!a'), '1.31', '1.32'),
        ]
        for argv, used, needed in cases:
            result = self.run_cmd('resource', 'provider', 'list', *argv,
                                  version=used)
            self.assertEqual(1, result.code, argv)
            self.assertEqual(
                'Operation or argument is not supported with version %s; '
                'requires at least version %s' % (used, needed),
                result.stderr.strip().splitlines()[-1])
        self.assertEqual([], self.sent())

    def test_gates_in_upstream_order(self):
        result = self.run_cmd('resource', 'provider', 'list', '--resource',
                              'VCPU=1', '--forbidden', 'X', version='1.0')
        self.assertIn('requires at least version 1.4', result.stderr)


class TestShow(commands.CommandTestCase):

    def test_show(self):
        self.transport.get(RP1_URL, json=commands.provider(UUID1, 'rp1'))
        result = self.run_cmd('resource', 'provider', 'show', UUID1,
                              '-f', 'json', version='1.14')
        self.assert_ok(result)
        self.assertEqual(COLUMNS_1_14, list(self.json_out(result)))
        self.assertEqual([('GET', '/resource_providers/' + UUID1, {}, None)],
                         self.sent())

    def test_allocations(self):
        allocations = {UUID2: {'resources': {'VCPU': 2}}}
        self.transport.get(RP1_URL, json=commands.provider(UUID1, 'rp1'))
        self.transport.get(RP1_URL + '/allocations', json={
            'allocations': allocations, 'resource_provider_generation': 1})
        result = self.run_cmd('resource', 'provider', 'show', UUID1,
                              '--allocations', '-f', 'json', version='1.0')
        self.assert_ok(result)
        output = self.json_out(result)
        self.assertEqual(COLUMNS_1_0 + ['allocations'], list(output))
        self.assertEqual(allocations, output['allocations'])
        table = self.run_cmd('resource', 'provider', 'show', UUID1,
                             '--allocations', version='1.0')
        self.assertIn("{'%s': {'resources': {'VCPU': 2}}}" % UUID2,
                      table.stdout)

    def test_not_found(self):
        self.transport.get(RP1_URL, **commands.error(
            404, 'No resource provider with uuid %s found' % UUID1))
        result = self.run_cmd('resource', 'provider', 'show', UUID1)
        self.assertEqual(1, result.code)
        self.assertEqual('No resource provider with uuid %s found (HTTP 404)'
                         % UUID1, result.stderr.strip())


class TestSet(commands.CommandTestCase):

    def given_put(self, parent=None):
        self.transport.put(RP1_URL, json=commands.provider(
            UUID1, 'new', 1, parent=parent))

    def test_rename(self):
        self.given_put()
        result = self.run_cmd('resource', 'provider', 'set', UUID1,
                              '--name', 'new', '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual([('PUT', '/resource_providers/' + UUID1, {},
                           {'name': 'new'})], self.sent())
        self.assertEqual({'uuid': UUID1, 'name': 'new', 'generation': 1},
                         self.json_out(result))

    def test_without_name_keeps_the_current_one(self):
        self.transport.get(RP1_URL, json=commands.provider(UUID1, 'old'))
        self.given_put(parent=UUID2)
        result = self.run_cmd('resource', 'provider', 'set', UUID1,
                              '--parent-provider', UUID2, version='1.14')
        self.assert_ok(result)
        self.assertEqual({'name': 'old', 'parent_provider_uuid': UUID2},
                         self.bodies('PUT')[0])

    def test_reparent_at_1_37(self):
        self.given_put(parent=UUID2)
        result = self.run_cmd('resource', 'provider', 'set', UUID1, '--name',
                              'new', '--parent-provider', UUID2, '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(UUID2, self.json_out(result)['parent_provider_uuid'])

    def test_unparent(self):
        self.given_put()
        result = self.run_cmd('resource', 'provider', 'set', UUID1, '--name',
                              'new', '--no-parent', version='1.37')
        self.assert_ok(result)
        self.assertEqual({'name': 'new', 'parent_provider_uuid': None},
                         self.bodies('PUT')[0])

    def test_unparent_needs_1_37(self):
        result = self.run_cmd('resource', 'provider', 'set', UUID1, '--name',
                              'new', '--no-parent', version='1.36')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.36; requires at least version 1.37',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_parent_needs_1_14(self):
        result = self.run_cmd('resource', 'provider', 'set', UUID1, '--name',
                              'new', '--parent-provider', UUID2,
                              version='1.13')
        self.assert_fails(result, 'requires at least version 1.14')

    def test_parent_and_no_parent_exclude_each_other(self):
        result = self.run_cmd('resource', 'provider', 'set', UUID1,
                              '--no-parent', '--parent-provider', UUID2)
        self.assert_fails(result, 'not allowed with argument', code=2)

    def test_reparent_refused_below_1_37(self):
        self.transport.put(RP1_URL, **commands.error(
            400, 'Unable to save resource provider %s: Object action update '
            'failed because: re-parenting a provider is not currently '
            'allowed.' % UUID1))
        result = self.run_cmd('resource', 'provider', 'set', UUID1, '--name',
                              'new', '--parent-provider', UUID2,
                              version='1.14')
        self.assertEqual(1, result.code)
        self.assertEqual('Unable to save resource provider %s: Object action '
                         'update failed because: re-parenting a provider is '
                         'not currently allowed. (HTTP 400)' % UUID1,
                         result.stderr.strip())


class TestDelete(commands.CommandTestCase):

    def test_delete(self):
        self.transport.delete(RP1_URL, status_code=204)
        result = self.run_cmd('resource', 'provider', 'delete', UUID1,
                              version='1.0')
        self.assert_ok(result)
        self.assertEqual('', result.stdout)
        self.assertEqual([('DELETE', '/resource_providers/' + UUID1, {},
                           None)], self.sent())

    def test_not_found(self):
        self.transport.delete(RP1_URL, **commands.error(
            404, 'No resource provider with uuid %s found for delete' % UUID1))
        result = self.run_cmd('resource', 'provider', 'delete', UUID1)
        self.assertEqual(1, result.code)
        self.assertEqual('No resource provider with uuid %s found for delete '
                         '(HTTP 404)' % UUID1, result.stderr.strip())

    def delete_conflict(self, detail, code, version, provider=UUID1):
        self.transport.get(RP_URL + '?name=rp1', json={
            'resource_providers': [commands.provider(UUID1, 'rp1')]})
        self.transport.delete(RP1_URL, headers={
            'x-openstack-request-id': 'req-9'}, **commands.error(
                409, detail, code))
        result = self.run_cmd('resource', 'provider', 'delete', provider,
                              version=version)
        self.assertEqual(1, result.code)
        return result.stderr.strip()

    def test_allocations_conflict_hints_at_consumer_list(self):
        detail = ('Unable to delete resource provider %s: Resource provider '
                  'has allocations.' % UUID1)
        for version, code in (('1.39', 'placement.resource_provider.inuse'),
                              ('1.0', 'placement.undefined_code')):
            self.assertEqual(
                '%s (HTTP 409) (Request-ID: req-9). See: openstack resource '
                'provider consumer list rp1' % detail,
                self.delete_conflict(detail, code, version, 'rp1'))

    def test_children_conflict_hints_at_tree_show(self):
        detail = ('Unable to delete parent resource provider %s: It has '
                  'child resource providers.' % UUID1)
        code = 'placement.resource_provider.cannot_delete_parent'
        self.assertEqual(
            '%s (HTTP 409) (Request-ID: req-9). See: openstack resource '
            'provider tree show %s' % (detail, UUID1),
            self.delete_conflict(detail, code, '1.39'))

    def test_other_conflicts_have_no_hint(self):
        self.assertEqual(
            'resource provider generation conflict (HTTP 409) '
            '(Request-ID: req-9)', self.delete_conflict(
                'resource provider generation conflict',
                'placement.concurrent_update', '1.39'))

    def test_negotiates_once(self):
        self.transport.get(commands.fakes.ROOT, status_code=406,
                           json=commands.fakes.not_acceptable('1.20'))
        self.transport.delete(RP1_URL, status_code=204)
        result = self.run_cmd('resource', 'provider', 'delete', UUID1,
                              version=None)
        self.assert_ok(result)
        self.assertEqual(['placement 1.39', 'placement 1.20'],
                         self.versions())


class TestStartupCost(testtools.TestCase):
    """Command modules must not pull in openstacksdk or the server."""

    def test_modules_import_only_what_they_need(self):
        code = (
            'import sys\n'
            'from osc_placement.resources import aggregate, inventory, '
            'resource_provider, usage\n'
            'heavy = ("openstack", "sqlalchemy", "osc_lib.utils", '
            '"osc_placement.server")\n'
            'print(sorted(n for n in sys.modules if n in heavy or '
            'n.startswith(tuple(h + "." for h in heavy))))\n')
        done = subprocess.run([sys.executable, '-c', code],
                              capture_output=True, text=True, check=True)
        self.assertEqual('[]', done.stdout.strip())
