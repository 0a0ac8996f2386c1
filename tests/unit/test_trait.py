# SPDX-License-Identifier: Apache-2.0
import json
from urllib import parse

import fixtures

from tests.unit import commands
from tests.unit.commands import AGG
from tests.unit.commands import UUID1
from tests.unit.commands import UUID2
from tests.unit.commands import UUID3
from tests.unit import fakes
from tests.unit import shell

RP = '4e8e5957-649f-477b-9e5b-f1f75b21c03c'


def query_of(request):
    # requests-mock lower-cases its own view of the query; read the URL.
    return parse.parse_qs(parse.urlsplit(request.url).query)


class TraitTestCase(fakes.TransportTestCase):

    def run_cmd(self, version, *argv):
        return shell.run_openstack(self, '--os-placement-api-version',
                                   version, *argv)

    def url(self, path):
        return fakes.ENDPOINT + path

    def assert_needs_1_6(self, *argv):
        result = self.run_cmd('1.5', *argv)
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.5; requires at least version 1.6',
                         result.stderr.strip())
        self.assertEqual([], self.transport.request_history)


class TestListTrait(TraitTestCase):

    def test_lists_names(self):
        self.transport.get(self.url('/traits'), json={
            'traits': ['HW_CPU_X86_AVX', 'CUSTOM_FOO']})
        result = self.run_cmd('1.6', 'trait', 'list', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'HW_CPU_X86_AVX'}, {'name': 'CUSTOM_FOO'}],
                         json.loads(result.stdout))
        self.assertEqual({}, query_of(self.transport.last_request))
        self.assertEqual(['placement 1.6'], self.versions_sent())

    def test_filters_are_passed_verbatim(self):
        self.transport.get(self.url('/traits'), json={'traits': []})
        result = self.run_cmd('1.6', 'trait', 'list', '--name',
                              'startswith:CUSTOM', '--associated')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual({'name': ['startswith:CUSTOM'],
                          'associated': ['True']},
                         query_of(self.transport.last_request))

    def test_needs_1_6(self):
        self.assert_needs_1_6('trait', 'list')


class TestShowCreateDeleteTrait(TraitTestCase):

    def test_show_echoes_the_name(self):
        self.transport.get(self.url('/traits/CUSTOM_FOO'), status_code=204)
        result = self.run_cmd('1.6', 'trait', 'show', 'CUSTOM_FOO',
                              '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual({'name': 'CUSTOM_FOO'}, json.loads(result.stdout))
        self.assertEqual([('GET', '/traits/custom_foo')], self.paths_sent())

    def test_show_unknown(self):
        self.transport.get(self.url('/traits/CUSTOM_NO'), status_code=404,
                           json=fakes.placement_error(
                               404, 'Not Found',
                               'No such trait(s): CUSTOM_NO.'))
        result = self.run_cmd('1.6', 'trait', 'show', 'CUSTOM_NO')
        self.assertEqual(1, result.code)
        self.assertEqual('No such trait(s): CUSTOM_NO. (HTTP 404)',
                         result.stderr.strip())

    def test_create_puts(self):
        self.transport.put(self.url('/traits/CUSTOM_FOO'), status_code=201)
        result = self.run_cmd('1.6', 'trait', 'create', 'CUSTOM_FOO')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual([('PUT', '/traits/custom_foo')], self.paths_sent())
        self.assertEqual(['placement 1.6'], self.versions_sent())

    def test_delete(self):
        self.transport.delete(self.url('/traits/CUSTOM_FOO'), status_code=204)
        result = self.run_cmd('1.6', 'trait', 'delete', 'CUSTOM_FOO')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('DELETE', '/traits/custom_foo')],
                         self.paths_sent())

    def test_gates(self):
        for argv in (('show', 'X'), ('create', 'X'), ('delete', 'X')):
            self.assert_needs_1_6('trait', *argv)


class TestResourceProviderTrait(TraitTestCase):

    def traits_url(self):
        return self.url('/resource_providers/%s/traits' % RP)

    def test_list(self):
        self.transport.get(self.traits_url(), json={
            'traits': ['CUSTOM_FOO'], 'resource_provider_generation': 3})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'list',
                              RP)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('| CUSTOM_FOO |', result.stdout)
        self.assertEqual([('GET', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())

    def test_list_unknown_provider(self):
        self.transport.get(self.traits_url(), status_code=404, json=(
            fakes.placement_error(404, 'Not Found',
                                  'No resource provider with uuid %s found'
                                  % RP)))
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'list',
                              RP)
        self.assertEqual(1, result.code)
        self.assertEqual('No resource provider with uuid %s found (HTTP 404)'
                         % RP, result.stderr.strip())

    def test_set_sends_the_generation_read_first(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'name': 'cn1', 'generation': 7})
        self.transport.put(self.traits_url(), json={
            'traits': ['CUSTOM_FOO', 'HW_CPU_X86_AVX'],
            'resource_provider_generation': 8})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '--trait', 'CUSTOM_FOO', '--trait',
                              'HW_CPU_X86_AVX', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'CUSTOM_FOO'}, {'name': 'HW_CPU_X86_AVX'}],
                         json.loads(result.stdout))
        self.assertEqual([('GET', '/resource_providers/%s' % RP),
                          ('PUT', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())
        self.assertEqual({'resource_provider_generation': 7,
                          'traits': ['CUSTOM_FOO', 'HW_CPU_X86_AVX']},
                         self.transport.last_request.json())

    def test_set_without_traits_clears(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'generation': 1})
        self.transport.put(self.traits_url(), json={
            'traits': [], 'resource_provider_generation': 2})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([], json.loads(result.stdout))
        self.assertEqual({'resource_provider_generation': 1, 'traits': []},
                         self.transport.last_request.json())

    def test_set_unknown_trait(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'generation': 1})
        self.transport.put(self.traits_url(), status_code=400, json=(
            fakes.placement_error(400, 'Bad Request',
                                  'No such trait CUSTOM_X')))
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '--trait', 'CUSTOM_X')
        self.assertEqual(1, result.code)
        self.assertEqual('No such trait CUSTOM_X (HTTP 400)',
                         result.stderr.strip())

    def test_delete(self):
        self.transport.delete(self.traits_url(), status_code=204)
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait',
                              'delete', RP)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('DELETE', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())

    def test_gates(self):
        for argv in (('list', RP), ('set', RP), ('delete', RP)):
            self.assert_needs_1_6('resource', 'provider', 'trait', *argv)


class TestResourceProviderTraitAggregate(commands.CommandTestCase):
    """``trait set/delete --aggregate``, ``--amend``, ``--trait``,
    ``--dry-run`` on a fake transport."""

    providers = (UUID1, UUID2, UUID3)

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.resources.common.SERVER_ERROR_BACKOFF', 0))

    @staticmethod
    def traits_url(uuid):
        return commands.url('/resource_providers/%s/traits' % uuid)

    @staticmethod
    def traits_path(uuid):
        return '/resource_providers/%s/traits' % uuid

    def given_members(self, uuids=providers, sharing=()):
        """Members listed (those in ``sharing`` also by the listing of
        sharing providers), each read with no trait at generation = its
        position (a test may answer differently)."""
        listing = commands.url('/resource_providers')
        self.transport.get(listing, json={
            'resource_providers': [
                commands.provider(uuid, generation=index)
                for index, uuid in enumerate(uuids)]})
        self.transport.get(listing + '?required=MISC_SHARES_VIA_AGGREGATE',
                           json={'resource_providers': [
                               commands.provider(uuid) for uuid in sharing]})
        for index, uuid in enumerate(uuids):
            self.given_traits(uuid, index)

    def given_traits(self, uuid, generation, *traits):
        self.transport.get(self.traits_url(uuid), json={
            'traits': list(traits),
            'resource_provider_generation': generation})

    def given_puts_echo(self, uuids=providers):
        def echo(request, context):
            body = request.json()
            return dict(body, resource_provider_generation=body[
                'resource_provider_generation'] + 1)
        for uuid in uuids:
            self.transport.put(self.traits_url(uuid), json=echo)

    def trait_cmd(self, action, *argv, version='1.6'):
        return self.run_cmd('resource', 'provider', 'trait', action, AGG,
                            '--aggregate', *argv, version=version)

    def puts(self):
        return {path: body for method, path, _, body in self.sent()
                if method == 'PUT'}

    def test_set_reads_every_member_then_replaces(self):
        self.given_members()
        self.given_puts_echo()
        result = self.trait_cmd('set', '--trait', 'CUSTOM_A', '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(('GET', '/resource_providers',
                          {'member_of': [AGG]}, None), self.sent()[0])
        # The sharing providers are listed and every member is read
        # before any is written.
        self.assertEqual(['GET'] * 5 + ['PUT'] * 3,
                         [sent[0] for sent in self.sent()])
        self.assertEqual(
            {self.traits_path(uuid): {'traits': ['CUSTOM_A'],
                                      'resource_provider_generation': index}
             for index, uuid in enumerate(self.providers)}, self.puts())
        self.assertEqual(
            [{'resource_provider': uuid, 'name': 'CUSTOM_A'}
             for uuid in self.providers], self.json_out(result))

    def test_amend_adds_and_skips_members_that_have_them(self):
        self.given_members()
        self.given_traits(UUID1, 5, 'HW_CPU_X86_SSE')
        self.given_traits(UUID2, 6, 'CUSTOM_A', 'HW_CPU_X86_SSE')
        self.given_traits(UUID3, 7)
        self.given_puts_echo()
        result = self.trait_cmd('set', '--amend', '--trait', 'CUSTOM_A',
                                '--trait', 'CUSTOM_A')
        self.assert_ok(result)
        self.assertEqual(
            {self.traits_path(UUID1): {
                'traits': ['HW_CPU_X86_SSE', 'CUSTOM_A'],
                'resource_provider_generation': 5},
             self.traits_path(UUID3): {
                'traits': ['CUSTOM_A'], 'resource_provider_generation': 7}},
            self.puts())

    def test_generation_conflict_is_read_again_and_retried(self):
        self.given_members((UUID1,))
        self.transport.get(self.traits_url(UUID1), [
            {'json': {'traits': ['CUSTOM_B'],
                      'resource_provider_generation': 1}},
            {'json': {'traits': ['CUSTOM_B', 'CUSTOM_C'],
                      'resource_provider_generation': 2}}])
        self.transport.put(self.traits_url(UUID1), [
            commands.error(409, 'resource provider generation conflict',
                           code='placement.concurrent_update'),
            {'json': {'traits': [], 'resource_provider_generation': 3}}])
        result = self.trait_cmd('set', '--amend', '--trait', 'CUSTOM_A')
        self.assert_ok(result)
        first, second = self.bodies('PUT')
        self.assertEqual(1, first['resource_provider_generation'])
        self.assertEqual({'traits': ['CUSTOM_B', 'CUSTOM_C', 'CUSTOM_A'],
                          'resource_provider_generation': 2}, second)

    def test_failures_are_reported_and_summed_up(self):
        self.given_members()
        self.given_puts_echo((UUID1, UUID3))
        self.transport.put(self.traits_url(UUID2), **commands.error(
            400, 'No such trait CUSTOM_A'))
        result = self.trait_cmd('set', '--trait', 'CUSTOM_A')
        self.assertEqual(1, result.code)
        self.assertEqual('', result.stdout)
        self.assertEqual(
            ['Failed to set traits for resource provider %s: No such trait '
             'CUSTOM_A (HTTP 400).' % UUID2,
             'Changed: rp (%s), rp (%s). The failed resource providers '
             'were not changed.' % (UUID1, UUID3),
             'Failed to set traits for 1 of 3 resource providers.'],
            result.stderr.strip().splitlines())
        # A 400 is not retried.
        self.assertEqual(3, len(self.bodies('PUT')))

    def test_dry_run_writes_nothing(self):
        self.given_members((UUID1,))
        self.given_traits(UUID1, 5, 'CUSTOM_B')
        self.transport.get(commands.url('/traits'),
                           json={'traits': ['CUSTOM_A']})
        result = self.trait_cmd('set', '--amend', '--dry-run',
                                '--trait', 'CUSTOM_A', '-f', 'json')
        self.assert_ok(result)
        self.assertEqual(['GET'] * 4, [r[0] for r in self.sent()])
        self.assertEqual([{'resource_provider': UUID1, 'name': 'rp',
                           'change': '+', 'trait': 'CUSTOM_A'}],
                         self.json_out(result))

    def test_delete_needs_trait_and_sends_nothing(self):
        result = self.trait_cmd('delete')
        self.assertEqual(2, result.code)
        self.assertIn('--aggregate needs --trait', result.stderr)
        self.assertEqual([], self.sent())

    def test_delete_checks_the_names_then_removes_only_them(self):
        self.transport.get(commands.url('/traits'),
                           json={'traits': ['CUSTOM_A']})
        self.given_members((UUID1, UUID2))
        self.given_traits(UUID1, 5, 'CUSTOM_A', 'CUSTOM_B')
        self.given_traits(UUID2, 6, 'CUSTOM_B')
        self.given_puts_echo((UUID1, UUID2))
        result = self.trait_cmd('delete', '--trait', 'CUSTOM_A', '--yes')
        self.assert_ok(result)
        self.assertEqual(('GET', '/traits', {'name': ['in:CUSTOM_A']}, None),
                         self.sent()[0])
        self.assertEqual({self.traits_path(UUID1): {
            'traits': ['CUSTOM_B'], 'resource_provider_generation': 5}},
            self.puts())

    def test_delete_unknown_name_changes_nothing(self):
        self.transport.get(commands.url('/traits'), json={'traits': []})
        result = self.trait_cmd('delete', '--trait', 'CUSTOM_TYPO')
        self.assertEqual(1, result.code)
        self.assertEqual('No such trait(s): CUSTOM_TYPO.',
                         result.stderr.strip())
        self.assertEqual(['GET'], [r[0] for r in self.sent()])

    def test_replace_keeps_protected_traits_unless_named(self):
        self.given_members((UUID1,))
        self.given_traits(UUID1, 4, 'COMPUTE_STATUS_DISABLED', 'CUSTOM_B')
        self.given_puts_echo((UUID1,))
        result = self.trait_cmd('set', '--trait', 'CUSTOM_A', '--yes')
        self.assert_ok(result)
        self.assertEqual(['CUSTOM_A', 'COMPUTE_STATUS_DISABLED'],
                         self.bodies('PUT')[0]['traits'])
        self.assertIn('Kept on rp (%s): COMPUTE_STATUS_DISABLED' % UUID1,
                      result.stderr)
        result = self.trait_cmd('set', '--trait', 'CUSTOM_A', '--yes',
                                '--remove-protected',
                                'COMPUTE_STATUS_DISABLED')
        self.assert_ok(result)
        self.assertEqual(['CUSTOM_A'], self.bodies('PUT')[1]['traits'])

    def test_a_removal_is_refused_without_a_terminal_or_yes(self):
        self.given_members((UUID1,))
        self.given_traits(UUID1, 4, 'CUSTOM_B')
        result = self.trait_cmd('set', '--trait', 'CUSTOM_A')
        self.assertEqual(1, result.code)
        self.assertIn('  rp (%s): +CUSTOM_A -CUSTOM_B' % UUID1,
                      result.stderr)
        self.assertIn('Refusing to remove traits from 1 of 1 resource '
                      'providers without confirmation', result.stderr)
        self.assertEqual([], self.bodies('PUT'))

    def test_every_member_sharing_changes_nothing(self):
        self.given_members((UUID1,), sharing=(UUID1,))
        result = self.trait_cmd('set', '--amend', '--trait', 'CUSTOM_A')
        self.assertEqual(1, result.code)
        self.assertIn('Every resource provider in aggregate %s shares '
                      'resources (trait MISC_SHARES_VIA_AGGREGATE), so '
                      'nothing was changed; give --include-sharing'
                      % AGG, result.stderr)
        self.assertEqual([], self.bodies('PUT'))

    def test_usage_errors_send_nothing(self):
        cases = (
            (('set', UUID1, '--yes'),
             '--yes applies only with --aggregate.'),
            (('set', UUID1, '--include-sharing', '--yes'),
             '--include-sharing, --yes apply only with --aggregate.'),
            (('delete', UUID1, '--trait', 'CUSTOM_A', '--yes'),
             '--yes applies only with --aggregate.'),
            (('set', AGG, '--aggregate', '--amend', '--remove-protected',
              'COMPUTE_STATUS_DISABLED'),
             '--remove-protected does nothing with --amend'),
            (('set', AGG, '--aggregate', '--trait', 'COMPUTE_STATUS_DISABLED',
              '--remove-protected', 'COMPUTE_STATUS_DISABLED'),
             'COMPUTE_STATUS_DISABLED is given both to keep'),
            (('set', AGG, '--aggregate', '--remove-protected',
              'HW_CPU_X86_SSE'),
             "invalid choice: 'HW_CPU_X86_SSE'"),
        )
        for argv, message in cases:
            result = self.run_cmd('resource', 'provider', 'trait', *argv,
                                  version='1.6')
            self.assertEqual(2, result.code, argv)
            self.assertIn(message, result.stderr)
        self.assertEqual([], self.sent())

    def test_one_provider_without_new_options_is_not_retried(self):
        """Upstream's set: a concurrent change fails the command."""
        self.transport.get(commands.url('/resource_providers/' + UUID1),
                           json=commands.provider(UUID1, generation=4))
        self.transport.put(self.traits_url(UUID1), **commands.error(
            409, 'generation conflict', code='placement.concurrent_update'))
        result = self.run_cmd('resource', 'provider', 'trait', 'set', UUID1,
                              '--trait', 'CUSTOM_A', version='1.6')
        self.assertEqual(1, result.code)
        self.assertEqual(1, len(self.bodies('PUT')))
