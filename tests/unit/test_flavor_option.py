# SPDX-License-Identifier: Apache-2.0
"""``--flavor`` and ``--show-request`` of explain and ``capacity --fit``.

The options' conflicts are checked through the real shell (nothing is
sent); how a flavor's request becomes the commands' own options is
checked on the real parsers with flavors given as Nova's API returns
them. Nova itself is not run here: tests/nova does that.
"""

import argparse
import io

from osc_lib import exceptions
import testtools

from osc_placement import flavor_request
from osc_placement.resources import allocation_candidate as candidates
from osc_placement.resources import capacity
from osc_placement.resources import flavor as flavor_option
from tests.unit import commands

AGG = commands.AGG


def nova_flavor(**specs):
    return {'id': '7', 'name': 'm1.gold', 'vcpus': 4, 'ram': 4096,
            'disk': 40, 'OS-FLV-EXT-DATA:ephemeral': 0, 'swap': 512,
            'extra_specs': specs}


def explain_parser():
    parser = argparse.ArgumentParser()
    candidates.add_options(parser)
    flavor_option.add_options(parser, flavor_option.EXPLAIN_HELP)
    return parser


class ConflictTests(commands.CommandTestCase):

    def explain(self, *argv):
        return self.run_cmd('allocation', 'candidate', 'explain', *argv)

    def capacity(self, *argv):
        return self.run_cmd('resource', 'provider', 'capacity', 'list',
                            *argv)

    def assert_refused(self, result, message):
        self.assert_fails(result, message)
        self.assertEqual([], self.transport.request_history)

    def test_explain_flavor_conflicts_with_resources_and_groups(self):
        message = 'cannot be used with --resource and --group'
        self.assert_refused(
            self.explain('--flavor', 'm1', '--resource', 'VCPU=1'), message)
        self.assert_refused(
            self.explain('--flavor', 'm1', '--group', '1', '--required',
                         'CUSTOM_A'), message)
        self.assert_refused(
            self.explain('--flavor', 'm1', '--group-policy', 'none'),
            message)

    def test_show_request_and_owner_nova_need_a_flavor(self):
        self.assert_refused(
            self.explain('--resource', 'VCPU=1', '--show-request'),
            '--show-request needs --flavor.')
        self.assert_refused(self.capacity('--fit', 'VCPU=1', '--owner-nova'),
                            '--owner-nova needs --flavor.')

    def test_capacity_flavor_conflicts_with_a_fit_value(self):
        self.assert_refused(
            self.capacity('--flavor', 'm1', '--fit', 'VCPU=1'),
            'cannot be used with a --fit value and --resource-class')
        self.assert_refused(
            self.capacity('--flavor', 'm1', '--resource-class', 'VCPU'),
            'cannot be used with a --fit value and --resource-class')

    def test_bare_fit_needs_a_flavor(self):
        self.assert_refused(self.capacity('--fit'),
                            '--fit needs a value, for example')

    def test_bare_fit_before_flavor_parses(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--fit', nargs='?',
                            const=capacity.FIT_FROM_FLAVOR)
        flavor_option.add_options(parser, flavor_option.FIT_HELP)
        args = parser.parse_args(['--fit', '--flavor', 'm1'])
        self.assertIs(capacity.FIT_FROM_FLAVOR, args.fit)
        self.assertEqual('m1', args.flavor)


class ExplainArgsTests(testtools.TestCase):

    def apply(self, flavor, *argv):
        args = explain_parser().parse_args(list(argv))
        request = flavor_option.translate(flavor)
        flavor_option.apply_to_candidate_args(args, request)
        query = candidates.build_query(args, args.groups, None)
        return args, flavor_option.with_group_policy(query, request)

    def test_flavor_alone_is_novas_request(self):
        flavor = nova_flavor(**{'trait:CUSTOM_GOLD': 'required'})
        args, query = self.apply(flavor, '--flavor', 'm1.gold')
        self.assertEqual(
            {'resources': 'DISK_GB:41,MEMORY_MB:4096,VCPU:4',
             'required': ['CUSTOM_GOLD'],
             'root_required': '!COMPUTE_STATUS_DISABLED'}, query)
        self.assertEqual(
            flavor_request.translate(flavor).query_pairs(),
            flavor_option.query_pairs(query))

    def test_unnamed_options_add_to_the_unsuffixed_group(self):
        args, query = self.apply(
            nova_flavor(**{'trait:CUSTOM_GOLD': 'required',
                           'resources1:VGPU': '1',
                           'group_policy': 'isolate'}),
            '--flavor', 'm1.gold', '--required', 'CUSTOM_RACK_1',
            '--forbidden', 'CUSTOM_SLOW', '--member-of', AGG,
            '--root-required', 'OWNER_NOVA')
        self.assertEqual(['CUSTOM_GOLD,CUSTOM_RACK_1,!CUSTOM_SLOW'],
                         query['required'])
        self.assertEqual(['in:' + AGG], query['member_of'])
        self.assertEqual('VGPU:1', query['resources1'])
        self.assertEqual('isolate', query['group_policy'])
        self.assertEqual('!COMPUTE_STATUS_DISABLED,OWNER_NOVA',
                         query['root_required'])

    def test_flavor_policy_with_one_group_is_sent(self):
        _, query = self.apply(
            nova_flavor(group_policy='none'), '--flavor', 'm1.gold')
        self.assertEqual('none', query['group_policy'])

    def test_no_policy_sent_for_one_group_without_one(self):
        _, query = self.apply(
            nova_flavor(**{'resources1:VGPU': '1'}), '--flavor', 'm1.gold')
        self.assertNotIn('group_policy', query)
        self.assertEqual('VGPU:1', query['resources1'])

    def test_refused_flavor_is_a_command_error(self):
        error = self.assertRaises(
            exceptions.CommandError, flavor_option.translate,
            nova_flavor(**{'hw:cpu_policy': 'pinned'}))
        self.assertIn('Flavor m1.gold: hw:cpu_policy=pinned', str(error))


class FitArgsTests(testtools.TestCase):

    def test_flavor_traits_become_fit_filters(self):
        request = flavor_option.translate(nova_flavor(**{
            'hw:cpu_policy': 'dedicated',
            'trait:CUSTOM_GOLD': 'required',
            'trait:CUSTOM_SLOW': 'forbidden'}))
        args = argparse.Namespace(required=['CUSTOM_RACK'], forbidden=[])
        fit = flavor_option.fit_request(request, 'm1.gold')
        flavor_option.apply_to_fit_args(args, request)
        self.assertEqual({'PCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 41}, fit)
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_RACK'], args.required)
        self.assertEqual(['CUSTOM_SLOW'], args.forbidden)
        self.assertEqual(['!COMPUTE_STATUS_DISABLED'], args.root_required)

    def test_granular_flavor_is_refused_with_the_way_out(self):
        request = flavor_option.translate(nova_flavor(**{
            'resources1:VGPU': '1'}))
        error = self.assertRaises(exceptions.CommandError,
                                  flavor_option.fit_request, request,
                                  'm1.gold')
        self.assertIn('request groups 1 besides the unsuffixed one',
                      str(error))
        self.assertIn('allocation candidate explain --flavor m1.gold',
                      str(error))

    def test_root_rule(self):
        holders = {'COMPUTE_STATUS_DISABLED': {'off'},
                   'OWNER_NOVA': {'on', 'off'}}
        rule = ['OWNER_NOVA', '!COMPUTE_STATUS_DISABLED']
        self.assertTrue(capacity.root_passes('on', rule, holders))
        self.assertFalse(capacity.root_passes('off', rule, holders))
        self.assertFalse(capacity.root_passes('other', rule, holders))
        self.assertTrue(capacity.root_passes(
            'other', ['!COMPUTE_STATUS_DISABLED'], holders))


class ShowRequestTests(testtools.TestCase):

    def test_query_then_readable_lines(self):
        request = flavor_option.translate(nova_flavor(**{
            'resources1:VGPU': '1', 'group_policy': 'none'}))
        stderr = io.StringIO()
        flavor_option.show_request(stderr, request, request.query_pairs(),
                                   True)
        lines = stderr.getvalue().splitlines()
        self.assertEqual(
            'GET /allocation_candidates?group_policy=none'
            '&resources=DISK_GB:41,MEMORY_MB:4096,VCPU:4'
            '&resources1=VGPU:1&root_required=!COMPUTE_STATUS_DISABLED',
            lines[0])
        self.assertIn('m1.gold (7)', lines[1])
        self.assertEqual('  group 1: resources VGPU=1', lines[3])

    def test_not_shown_unless_asked(self):
        stderr = io.StringIO()
        request = flavor_option.translate(nova_flavor())
        with self.assertLogs('osc_placement.resources.flavor',
                             level='DEBUG') as logged:
            flavor_option.show_request(stderr, request,
                                       request.query_pairs(), False)
        self.assertEqual('', stderr.getvalue())
        self.assertIn('GET /allocation_candidates?', logged.output[0])
