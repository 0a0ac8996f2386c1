# SPDX-License-Identifier: Apache-2.0
import argparse
import json
from urllib import parse

import testtools

from osc_placement.resources import allocation_candidate as candidates
from tests.unit import fakes
from tests.unit import shell

CN = 'cccccccc-0000-0000-0000-000000000001'
GPU = 'cccccccc-0000-0000-0000-000000000002'
AGG = 'aaaaaaaa-0000-0000-0000-000000000001'
URL = fakes.ENDPOINT + '/allocation_candidates'

SUMMARIES = {
    CN: {'resources': {'VCPU': {'used': 2, 'capacity': 256},
                       'MEMORY_MB': {'used': 0, 'capacity': 1024}},
         'traits': ['HW_CPU_X86_AVX2', 'CUSTOM_FOO']},
    GPU: {'resources': {'VGPU': {'used': 1, 'capacity': 4}}, 'traits': []},
}


def dict_body(*requests, mappings=None):
    body = {'allocation_requests': [], 'provider_summaries': SUMMARIES}
    for index, allocations in enumerate(requests):
        request = {'allocations': {
            rp: {'resources': resources} for rp, resources in allocations}}
        if mappings:
            request['mappings'] = mappings[index]
        body['allocation_requests'].append(request)
    return body


def query_of(request):
    return parse.parse_qs(parse.urlsplit(request.url).query)


class TestParsing(testtools.TestCase):
    """The argparse actions put options into request groups."""

    def parse(self, *argv):
        parser = argparse.ArgumentParser()
        candidates.add_options(parser)
        return parser.parse_args(list(argv))

    def test_options_before_any_group_are_unnamed(self):
        args = self.parse('--resource', 'VCPU=1', '--required', 'A',
                          '--group', '1', '--resource', 'VGPU=1',
                          '--in-tree', CN, '--group', 'acc',
                          '--forbidden', 'B')
        self.assertEqual(['', '1', 'acc'], list(args.groups))
        self.assertEqual(['VCPU=1'], args.groups['']['resources'])
        self.assertEqual(['A'], args.groups['']['required'])
        self.assertEqual(CN, args.groups['1']['in_tree'])
        self.assertEqual(['B'], args.groups['acc']['forbidden'])
        self.assertEqual([], args.groups['acc']['resources'])

    def test_query_of_groups(self):
        args = self.parse('--resource', 'VCPU=1', '--resource', 'DISK_GB=2',
                          '--group', '1', '--resource', 'VGPU=1',
                          '--required', 'A,B', '--required', 'C',
                          '--forbidden', 'D', '--member-of', '!' + AGG,
                          '--in-tree', CN)
        query = candidates.build_query(args, args.groups, None)
        self.assertEqual({
            'resources': 'VCPU:1,DISK_GB:2', 'group_policy': 'none',
            'resources1': 'VGPU:1', 'required1': ['in:A,B', 'C,!D'],
            'member_of1': ['!' + AGG], 'in_tree1': CN}, query)

    def test_no_group_no_policy(self):
        args = self.parse('--resource', 'VCPU=1', '--group-policy',
                          'isolate')
        self.assertEqual({'resources': 'VCPU:1'},
                         candidates.build_query(args, args.groups, None))


class CandidateTestCase(fakes.TransportTestCase):

    def run_list(self, version, *argv):
        prefix = ('--os-placement-api-version', version) if version else ()
        return shell.run_openstack(self, *prefix, 'allocation', 'candidate',
                                   'list', *argv)

    def rows(self, version, *argv, body=None):
        self.transport.get(URL, json=body or dict_body([(CN, {'VCPU': 1})]))
        result = self.run_list(version, *argv, '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        return json.loads(result.stdout)

    def query(self):
        return query_of(self.transport.last_request)

    def assert_fails(self, text, version, *argv):
        sent_before = len(self.transport.request_history)
        result = self.run_list(version, *argv)
        self.assertEqual(1, result.code)
        self.assertEqual(text, result.stderr.strip())
        # Nothing sent for this command.
        self.assertEqual(sent_before, len(self.transport.request_history))

    def assert_gate(self, used, needed, *argv):
        self.assert_fails('Operation or argument is not supported with '
                          'version %s; requires at least version %s'
                          % (used, needed), used, *argv)


class TestColumns(CandidateTestCase):

    def test_1_10_reads_list_allocations(self):
        body = {'allocation_requests': [{'allocations': [
            {'resource_provider': {'uuid': CN},
             'resources': {'VCPU': 1, 'MEMORY_MB': 64}}]}],
            'provider_summaries': {CN: {'resources': SUMMARIES[CN][
                'resources']}}}
        rows = self.rows('1.10', '--resource', 'VCPU=1', '--resource',
                         'MEMORY_MB=64', body=body)
        self.assertEqual([{'#': 1, 'allocation': 'VCPU=1,MEMORY_MB=64',
                           'resource provider': CN,
                           'inventory used/capacity':
                               'VCPU=2/256,MEMORY_MB=0/1024'}], rows)
        self.assertEqual({'resources': ['VCPU:1,MEMORY_MB:64']},
                         self.query())
        self.assertEqual(['placement 1.10'], self.versions_sent())

    def test_1_12_reads_dict_allocations(self):
        body = dict_body([(CN, {'VCPU': 1}), (GPU, {'VGPU': 1})],
                         [(CN, {'VCPU': 1})])
        rows = self.rows('1.12', '--resource', 'VCPU=1', body=body)
        self.assertEqual([(1, CN, 'VCPU=1'), (1, GPU, 'VGPU=1'),
                          (2, CN, 'VCPU=1')],
                         [(r['#'], r['resource provider'], r['allocation'])
                          for r in rows])
        self.assertNotIn('traits', rows[0])

    def test_1_17_adds_traits(self):
        rows = self.rows('1.17', '--resource', 'VCPU=1', '--required',
                         'HW_CPU_X86_AVX2')
        self.assertEqual('HW_CPU_X86_AVX2,CUSTOM_FOO', rows[0]['traits'])
        self.assertEqual(['#', 'allocation', 'resource provider',
                          'inventory used/capacity', 'traits'],
                         list(rows[0]))
        self.assertEqual(['HW_CPU_X86_AVX2'], self.query()['required'])

    def test_1_33_has_no_mappings(self):
        self.assertNotIn('mappings', self.rows('1.33', '--resource',
                                               'VCPU=1')[0])

    def test_1_39_default_columns_are_upstream_ones(self):
        self.assertEqual(['#', 'allocation', 'resource provider',
                          'inventory used/capacity', 'traits'],
                         list(self.rows('1.39', '--resource', 'VCPU=1')[0]))

    def test_mappings_needs_1_34(self):
        self.assert_gate('1.33', '1.34', '--resource', 'VCPU=1',
                         '--mappings')

    def test_1_34_adds_mappings(self):
        body = dict_body([(CN, {'VCPU': 1}), (GPU, {'VGPU': 1})],
                         mappings=[{'': [CN], 'gpu': [GPU]}])
        rows = self.rows('1.34', '--resource', 'VCPU=1', '--group', 'gpu',
                         '--resource', 'VGPU=1', '--mappings', body=body)
        self.assertEqual([[''], ['gpu']], [r['mappings'] for r in rows])

    def test_1_34_mappings_in_a_table(self):
        self.transport.get(URL, json=dict_body(
            [(CN, {'VCPU': 1})], mappings=[{'': [CN], 'x': [CN]}]))
        result = self.run_list('1.34', '--resource', 'VCPU=1', '--mappings')
        self.assertEqual(0, result.code, result.stderr)
        header, row = result.stdout.splitlines()[1], result.stdout.splitlines(
        )[3]
        self.assertEqual(['#', 'allocation', 'resource provider',
                          'inventory used/capacity', 'traits', 'mappings'],
                         [cell.strip() for cell in header.split('|')[1:-1]])
        self.assertEqual('(unnamed),x', row.split('|')[-2].strip())

    def test_resourceless_group_provider_follows_with_no_allocation(self):
        body = dict_body([(GPU, {'VGPU': 1})],
                         mappings=[{'acc': [GPU], 'root': [CN]}])
        rows = self.rows('1.36', '--group', 'acc', '--resource', 'VGPU=1',
                         '--group', 'root', '--required', 'CUSTOM_FOO',
                         '--same-subtree', 'acc,root', '--mappings',
                         body=body)
        self.assertEqual([(GPU, 'VGPU=1', ['acc']), (CN, '', ['root'])],
                         [(r['resource provider'], r['allocation'],
                           r['mappings']) for r in rows])
        self.assertEqual({'group_policy': ['none'], 'resourcesacc': [
            'VGPU:1'], 'requiredroot': ['CUSTOM_FOO'],
            'same_subtree': ['acc,root']}, self.query())

    def test_1_29_nested_candidate_in_a_table(self):
        self.transport.get(URL, json=dict_body(
            [(GPU, {'VGPU': 1}), (CN, {'VCPU': 1})]))
        result = self.run_list('1.29', '--group', '1', '--resource', 'VGPU=1',
                               '--group', '2', '--resource', 'VCPU=1',
                               '--required', 'HW_CPU_X86_AVX2')
        self.assertEqual(0, result.code, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(
            ['1', 'VGPU=1', GPU, 'VGPU=1/4', ''],
            [cell.strip() for cell in lines[3].split('|')[1:-1]])
        self.assertEqual(
            ['1', 'VCPU=1', CN, 'VCPU=2/256,MEMORY_MB=0/1024',
             'HW_CPU_X86_AVX2,CUSTOM_FOO'],
            [cell.strip() for cell in lines[4].split('|')[1:-1]])
        self.assertEqual({'group_policy': ['none'], 'resources1': ['VGPU:1'],
                          'resources2': ['VCPU:1'],
                          'required2': ['HW_CPU_X86_AVX2']}, self.query())
        self.assertEqual(['placement 1.29'], self.versions_sent())

    def test_table_rows_and_empty_answer(self):
        self.transport.get(URL, json={'allocation_requests': [],
                                      'provider_summaries': {}})
        result = self.run_list('1.29', '--resource', 'VCPU=1')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout.strip())

    def test_resourceless_group_provider_needs_mappings_to_show(self):
        body = dict_body([(GPU, {'VGPU': 1})],
                         mappings=[{'acc': [GPU], 'root': [CN]}])
        rows = self.rows('1.36', '--group', 'acc', '--resource', 'VGPU=1',
                         '--group', 'root', '--required', 'CUSTOM_FOO',
                         '--same-subtree', 'acc,root', body=body)
        self.assertEqual([GPU], [r['resource provider'] for r in rows])

    def test_negotiated_version_mappings(self):
        self.transport.get(fakes.ROOT, json=fakes.root_document())
        rows = self.rows(None, '--resource', 'VCPU=1', '--mappings')
        self.assertIn('mappings', rows[0])
        self.assertEqual(['placement 1.39'] * 2, self.versions_sent())


class TestQueryAndGates(CandidateTestCase):

    def test_needs_1_10(self):
        self.assert_gate('1.9', '1.10', '--resource', 'VCPU=1')

    def test_at_least_one_resource(self):
        self.assert_fails('At least one --resource must be specified.',
                          '1.29')
        self.assert_fails('At least one --resource must be specified.',
                          '1.29', '--required', 'CUSTOM_FOO')

    def test_resource_format(self):
        self.assert_fails('Arguments to --resource must be of form '
                          '<resource_class>=<value>', '1.10', '--resource',
                          'VCPU:1')

    def test_limit(self):
        self.rows('1.16', '--resource', 'VCPU=1', '--limit', '5')
        self.assertEqual(['5'], self.query()['limit'])
        self.assert_gate('1.15', '1.16', '--resource', 'VCPU=1',
                         '--limit', '5')

    def test_required_and_forbidden(self):
        self.rows('1.22', '--resource', 'VCPU=1', '--required', 'A',
                  '--forbidden', 'B')
        self.assertEqual(['A,!B'], self.query()['required'])
        self.assert_gate('1.16', '1.17', '--resource', 'VCPU=1',
                         '--required', 'A')
        self.assert_gate('1.21', '1.22', '--resource', 'VCPU=1',
                         '--forbidden', 'B')

    def test_any_of_traits(self):
        self.rows('1.39', '--resource', 'VCPU=1', '--required', 'A,B')
        self.assertEqual(['in:A,B'], self.query()['required'])
        self.assert_gate('1.38', '1.39', '--resource', 'VCPU=1',
                         '--required', 'A,B')

    def test_member_of(self):
        self.rows('1.24', '--resource', 'VCPU=1', '--member-of', 'a,b',
                  '--member-of', 'c')
        self.assertEqual(['in:a,b', 'in:c'], self.query()['member_of'])
        self.assert_gate('1.20', '1.21', '--resource', 'VCPU=1',
                         '--member-of', AGG)

    def test_aggregate_uuid_warns(self):
        self.transport.get(URL, json=dict_body())
        result = self.run_list('1.21', '--resource', 'VCPU=1',
                               '--aggregate-uuid', 'a', '--aggregate-uuid',
                               'b')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('The --aggregate-uuid option is deprecated, please '
                         'use --member-of instead.', result.stderr.strip())
        self.assertEqual(['in:a,b'], self.query()['member_of'])

    def test_forbidden_aggregates(self):
        self.rows('1.32', '--resource', 'VCPU=1', '--member-of', '!' + AGG)
        self.assertEqual(['!' + AGG], self.query()['member_of'])
        self.assert_gate('1.31', '1.32', '--resource', 'VCPU=1',
                         '--member-of', '!' + AGG)

    def test_numbered_groups(self):
        self.rows('1.25', '--group', '1', '--resource', 'VCPU=1',
                  '--group', '2', '--resource', 'VGPU=1', '--group-policy',
                  'isolate')
        self.assertEqual({'resources1': ['VCPU:1'], 'resources2': ['VGPU:1'],
                          'group_policy': ['isolate']}, self.query())
        self.assert_gate('1.24', '1.25', '--group', '1', '--resource',
                         'VCPU=1')

    def test_named_groups(self):
        self.rows('1.33', '--group', 'COMPUTE', '--resource', 'VCPU=1')
        self.assertEqual(['VCPU:1'], self.query()['resourcesCOMPUTE'])
        self.assert_gate('1.32', '1.33', '--group', 'COMPUTE',
                         '--resource', 'VCPU=1')

    def test_zero_and_leading_zeros_are_names(self):
        # Before 1.33 the server takes [1-9][0-9]* suffixes only.
        for name in ('0', '01'):
            self.assert_gate('1.32', '1.33', '--resource', 'VCPU=1',
                             '--group', name, '--resource', 'VGPU=1')
            self.rows('1.33', '--group', name, '--resource', 'VGPU=1')
            self.assertEqual(['VGPU:1'], self.query()['resources' + name])

    def test_group_without_resource_is_one_line(self):
        self.assert_fails('--resource should be provided in group 1',
                          '1.25', '--resource', 'VCPU=1', '--group', '1',
                          '--required', 'A')
        self.assert_fails('--resource should be provided in the unnamed '
                          'group (the options before the first --group)',
                          '1.25', '--required', 'A', '--group', '1',
                          '--resource', 'VCPU=1')

    def test_in_tree(self):
        self.rows('1.31', '--resource', 'VCPU=1', '--in-tree', CN,
                  '--group', '1', '--resource', 'VGPU=1', '--in-tree', GPU)
        self.assertEqual([CN], self.query()['in_tree'])
        self.assertEqual([GPU], self.query()['in_tree1'])
        self.assert_gate('1.30', '1.31', '--resource', 'VCPU=1',
                         '--in-tree', CN)

    def test_root_required(self):
        self.rows('1.35', '--resource', 'VCPU=1', '--root-required', 'A',
                  '--root-required', '!B,C')
        self.assertEqual(['A,!B,C'], self.query()['root_required'])
        self.assert_gate('1.34', '1.35', '--resource', 'VCPU=1',
                         '--root-required', 'A')

    def test_same_subtree_repeats(self):
        self.rows('1.36', '--group', '1', '--resource', 'VCPU=1',
                  '--group', '2', '--resource', 'VGPU=1',
                  '--group', '3', '--resource', 'DISK_GB=1',
                  '--same-subtree', '1,2', '--same-subtree', '2,3')
        self.assertEqual(['1,2', '2,3'], self.query()['same_subtree'])
        self.assert_gate('1.35', '1.36', '--group', '1', '--resource',
                         'VCPU=1', '--same-subtree', '1,2')

    def test_resourceless_group_must_be_in_same_subtree(self):
        self.assert_fails('--resource should be provided in group 2',
                          '1.36', '--group', '1', '--resource', 'VCPU=1',
                          '--group', '2', '--required', 'A',
                          '--same-subtree', '1,3')

    def test_server_error(self):
        self.transport.get(URL, status_code=400, json=fakes.placement_error(
            400, 'Bad Request', 'Invalid resource class in resources '
            'parameter: No such resource class CUSTOM_X.'))
        result = self.run_list('1.29', '--resource', 'CUSTOM_X=1')
        self.assertEqual(1, result.code)
        self.assertEqual('Invalid resource class in resources parameter: '
                         'No such resource class CUSTOM_X. (HTTP 400)',
                         result.stderr.strip())


class TestVersionTables(testtools.TestCase):
    """The column tables, read through version.supports."""

    def names_at(self, ver):
        args = argparse.Namespace(mappings=True)
        return candidates.shown_columns(args, ver)

    def test_candidate_columns_per_version(self):
        base = ('#', 'allocation', 'resource provider',
                'inventory used/capacity')
        self.assertEqual(base, self.names_at('1.10'))
        self.assertEqual(base, self.names_at('1.16'))
        self.assertEqual(base + ('traits',), self.names_at('1.17'))
        self.assertEqual(base + ('traits',), self.names_at('1.33'))
        self.assertEqual(base + ('traits', 'mappings'), self.names_at('1.34'))

    def test_mappings_column_is_opt_in(self):
        args = argparse.Namespace(mappings=False)
        self.assertNotIn('mappings', candidates.shown_columns(args, '1.39'))
